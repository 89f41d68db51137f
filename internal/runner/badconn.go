package runner

import "database/sql/driver"

var errBadConn = driver.ErrBadConn
