# The GC policies that the strategies of table "events" need (cellttl).
# deletion_policy = "ABANDON" keeps a policy when its resource is
# removed or replaced, instead of setting the family to no GC.
#
# Terraform deletes, with its data, every family that the table's
# google_bigtable_table resource does not list: it must hold
#   column_family {
#     family = "clicks"
#   }
#   column_family {
#     family = "hits"
#     type   = "intsum"
#   }
#   column_family {
#     family = "seq"
#   }
#   column_family {
#     family = "sess"
#   }
#   column_family {
#     family = "swept"
#   }

# clicks: DefaultExpiration(168h0m0s), GC maxage=7d
resource "google_bigtable_gc_policy" "events_clicks" {
  project         = google_bigtable_table.events.project
  instance_name   = google_bigtable_table.events.instance_name
  table           = google_bigtable_table.events.name
  column_family   = "clicks"
  deletion_policy = "ABANDON"
  ignore_warnings = true

  max_age {
    duration = "168h"
  }
}

# hits: Counter(DefaultExpiration(1h0m0s)), GC maxage=1h, an aggregate of int64 sums (type = "intsum")
resource "google_bigtable_gc_policy" "events_hits" {
  project         = google_bigtable_table.events.project
  instance_name   = google_bigtable_table.events.instance_name
  table           = google_bigtable_table.events.name
  column_family   = "hits"
  deletion_policy = "ABANDON"
  ignore_warnings = true

  max_age {
    duration = "1h"
  }
}

# seq: SequenceNumbers(3), GC maxversions=3
resource "google_bigtable_gc_policy" "events_seq" {
  project         = google_bigtable_table.events.project
  instance_name   = google_bigtable_table.events.instance_name
  table           = google_bigtable_table.events.name
  column_family   = "seq"
  deletion_policy = "ABANDON"
  ignore_warnings = true

  max_version {
    number = 3
  }
}

# sess: OneSecond(), GC maxage=1s
resource "google_bigtable_gc_policy" "events_sess" {
  project         = google_bigtable_table.events.project
  instance_name   = google_bigtable_table.events.instance_name
  table           = google_bigtable_table.events.name
  column_family   = "sess"
  deletion_policy = "ABANDON"
  ignore_warnings = true

  max_age {
    duration = "1s"
  }
}

# swept: Grace(DefaultExpiration(36h0m0s), 1m30s), GC maxage=129690s
resource "google_bigtable_gc_policy" "events_swept" {
  project         = google_bigtable_table.events.project
  instance_name   = google_bigtable_table.events.instance_name
  table           = google_bigtable_table.events.name
  column_family   = "swept"
  deletion_policy = "ABANDON"
  ignore_warnings = true

  max_age {
    duration = "129690s"
  }
}
