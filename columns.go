package ttl

import "cloud.google.com/go/bigtable"

// One column, or one value, selected without a regular expression (which
// Bigtable would evaluate for every cell).

// exactColumn selects family:column, with no regular expression.
func exactColumn(family, column string) bigtable.Filter {
	return bigtable.ColumnRangeFilter(family, column, column+"\x00")
}

// exactValue passes the cells whose value is v, with no regular
// expression: v is the only string from v (included) to v + "\x00".
func exactValue(v []byte) bigtable.Filter {
	return bigtable.ValueRangeFilter(v, append(append(make([]byte, 0, len(v)+1), v...), 0))
}
