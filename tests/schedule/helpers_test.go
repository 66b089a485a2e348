package schedule_test

import "context"

// ctx is the context of the tests' requests.
var ctx = context.Background()
