package target

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/go-sql-driver/mysql"
)

// The MySQL and MariaDB error numbers shakedown tells apart, named as the
// servers' headers name them (ER_* from the server, CR_* from the client
// library). This is the one file that writes them as numbers: every other
// package names them here, and the classifiers below say what they mean
// for a caller (the connection is gone, trying again cannot help), so
// that no two packages decide it differently.
const (
	ERDBCreateExists            = 1007 // ER_DB_CREATE_EXISTS
	ERCheckRead                 = 1020 // ER_CHECKREAD: record changed since last read
	ERConCount                  = 1040 // ER_CON_COUNT_ERROR: too many connections
	ERDBAccessDenied            = 1044 // ER_DBACCESS_DENIED_ERROR
	ERAccessDenied              = 1045 // ER_ACCESS_DENIED_ERROR
	ERNoDB                      = 1046 // ER_NO_DB_ERROR
	ERBadDB                     = 1049 // ER_BAD_DB_ERROR
	ERTableExists               = 1050 // ER_TABLE_EXISTS_ERROR
	ERServerShutdown            = 1053 // ER_SERVER_SHUTDOWN
	ERBadField                  = 1054 // ER_BAD_FIELD_ERROR
	ERDupEntry                  = 1062 // ER_DUP_ENTRY
	ERParse                     = 1064 // ER_PARSE_ERROR
	ERWsrepNotReady             = 1047 // ER_UNKNOWN_COM_ERROR, which a Galera node answers while it is not yet synced ("WSREP has not yet prepared node")
	ERUnknown                   = 1105 // ER_UNKNOWN_ERROR
	ERUnknownTable              = 1109 // ER_UNKNOWN_TABLE
	ERTableAccessDenied         = 1142 // ER_TABLEACCESS_DENIED_ERROR
	ERColumnAccessDenied        = 1143 // ER_COLUMNACCESS_DENIED_ERROR
	ERNoSuchTable               = 1146 // ER_NO_SUCH_TABLE
	ERNotAllowedCommand         = 1148 // ER_NOT_ALLOWED_COMMAND
	ERErrorDuringCommit         = 1180 // ER_ERROR_DURING_COMMIT
	ERUnknownSystemVariable     = 1193 // ER_UNKNOWN_SYSTEM_VARIABLE
	ERLockWaitTimeout           = 1205 // ER_LOCK_WAIT_TIMEOUT
	ERLockDeadlock              = 1213 // ER_LOCK_DEADLOCK
	ERSpecificAccessDenied      = 1227 // ER_SPECIFIC_ACCESS_DENIED_ERROR: needs SUPER, SYSTEM_VARIABLES_ADMIN...
	ERLocalVariable             = 1228 // ER_LOCAL_VARIABLE: a SESSION variable
	ERNotSupportedYet           = 1235 // ER_NOT_SUPPORTED_YET
	ERMasterFatalReadingBinlog  = 1236 // ER_MASTER_FATAL_ERROR_READING_BINLOG: a position the source cannot serve
	ERIncorrectGlobalLocalVar   = 1238 // ER_INCORRECT_GLOBAL_LOCAL_VAR: read only
	ERFeatureDisabled           = 1289 // ER_FEATURE_DISABLED
	EROptionPreventsStatement   = 1290 // ER_OPTION_PREVENTS_STATEMENT: read-only
	ERUnsupportedPS             = 1295 // ER_UNSUPPORTED_PS
	ERQueryInterrupted          = 1317 // ER_QUERY_INTERRUPTED
	ERProcAccessDenied          = 1370 // ER_PROCACCESS_DENIED_ERROR
	ERAccessDeniedNoPassword    = 1698 // ER_ACCESS_DENIED_NO_PASSWORD_ERROR
	ERMasterHasPurgedGTIDs      = 1789 // ER_MASTER_HAS_PURGED_REQUIRED_GTIDS (MySQL)
	ERConnectionKilled          = 1927 // ER_CONNECTION_KILLED (MariaDB)
	ERQueryTimeout              = 3024 // ER_QUERY_TIMEOUT: max_execution_time exceeded (MySQL)
	ERSecureTransportRequired   = 3159 // ER_SECURE_TRANSPORT_REQUIRED: the server takes TLS connections only
	ERRoleNotGranted            = 3530 // ER_ROLE_NOT_GRANTED (MySQL 8)
	ERClientLocalFilesDisabled  = 3948 // ER_CLIENT_LOCAL_FILES_DISABLED (MySQL 8)
	ERClientInteractionTimeout  = 4031 // ER_CLIENT_INTERACTION_TIMEOUT (MySQL 8)
	ERLoadInfileCapabilityDisab = 4166 // ER_LOAD_INFILE_CAPABILITY_DISABLED (MariaDB 10.5+)

	CRConnectionError           = 2002 // CR_CONNECTION_ERROR
	CRServerGone                = 2006 // CR_SERVER_GONE_ERROR
	CRTCPConnection             = 2011 // CR_TCP_CONNECTION
	CRServerLost                = 2013 // CR_SERVER_LOST
	CRServerLostExtended        = 2055 // CR_SERVER_LOST_EXTENDED
	CRLoadDataLocalInfileReject = 2068 // CR_LOAD_DATA_LOCAL_INFILE_REJECTED
)

// DefaultIgnoreErrors is sysbench's --mysql-ignore-errors: ERLockDeadlock,
// ERCheckRead and ERLockWaitTimeout are counted and tried again.
const DefaultIgnoreErrors = "1213,1020,1205"

// codeNames are the codes a load meets most, said in a few words, so that
// a reader of "1213: 1234" need not look it up.
var codeNames = map[uint16]string{
	ERCheckRead:                "record changed since last read",
	ERConCount:                 "too many connections",
	ERServerShutdown:           "server shutdown",
	ERDupEntry:                 "duplicate key",
	ERUnknown:                  "unknown error",
	ERErrorDuringCommit:        "error during commit",
	ERLockWaitTimeout:          "lock wait timeout",
	ERLockDeadlock:             "deadlock",
	EROptionPreventsStatement:  "read-only",
	ERQueryInterrupted:         "query interrupted",
	ERConnectionKilled:         "connection killed",
	CRConnectionError:          "cannot connect",
	CRServerGone:               "server has gone away",
	CRServerLost:               "lost connection",
	ERQueryTimeout:             "max_execution_time exceeded",
	ERClientInteractionTimeout: "disconnected by the server",
}

// CodeName says code in a few words ("deadlock"); "" for a code without a
// name here.
func CodeName(code uint16) string { return codeNames[code] }

// Code returns the MySQL error number of err: the server's code, or a client
// code for a failure of the connection itself; 0 when err is not a database
// error at all.
func Code(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	if IsConnLost(err) {
		return CRServerLost
	}
	return 0
}

// ConnLostCode reports whether an error number means the connection is
// gone: what IsConnLost says of a server's or client's error, for a run's
// errors counted by code (Code gives CRServerLost for a connection that
// broke without a number).
func ConnLostCode(code uint16) bool {
	switch code {
	case ERServerShutdown, ERConnectionKilled, ERClientInteractionTimeout,
		CRServerGone, CRServerLost, CRTCPConnection, CRServerLostExtended:
		return true
	}
	return false
}

// EndsSession reports whether err is a server error that the server sends
// as it closes the connection: the session was killed (MariaDB) or the
// server is shutting down.
func EndsSession(err error) bool {
	var me *mysql.MySQLError
	return errors.As(err, &me) && (me.Number == ERConnectionKilled || me.Number == ERServerShutdown)
}

// Transient says whether a statement that failed with code may succeed
// when run again as it was: the server rolled it back for a deadlock or a
// lock it waited for too long (sysbench's --mysql-ignore-errors by
// default).
func Transient(code uint16) bool {
	switch code {
	case ERLockDeadlock, ERLockWaitTimeout, ERCheckRead:
		return true
	}
	return false
}

// NotReady says whether err is a server's answer while it comes up, that
// it will not give in a moment: a Galera node not yet synced (1047), or
// not yet back in the cluster's primary component, which it says at
// commit (1180, "Not connected to Primary Component").
func NotReady(err error) bool {
	var me *mysql.MySQLError
	if !errors.As(err, &me) {
		return false
	}
	return me.Number == ERWsrepNotReady ||
		(me.Number == ERErrorDuringCommit && strings.Contains(me.Message, "Primary Component"))
}

// Permanent says whether trying to connect again cannot help: access
// denied, no such database, no such table.
func Permanent(code uint16) bool {
	switch code {
	case ERDBAccessDenied, ERAccessDenied, ERBadDB, ERNoSuchTable:
		return true
	}
	return false
}

// PrivilegeCode reports whether a read failed for want of a privilege (or a
// role), rather than because what it reads is not there.
func PrivilegeCode(code uint16) bool {
	switch code {
	case ERDBAccessDenied, ERAccessDenied, ERTableAccessDenied, ERColumnAccessDenied,
		ERSpecificAccessDenied, ERProcAccessDenied, ERAccessDeniedNoPassword, ERRoleNotGranted:
		return true
	}
	return false
}

// MissingCode reports whether a read failed because what it reads is not
// on this server (a table, column, variable or feature this flavour or
// version lacks), rather than for want of a privilege.
func MissingCode(code uint16) bool {
	switch code {
	case ERNoDB, ERBadField, ERParse, ERUnknown, ERUnknownTable, ERNoSuchTable,
		ERUnknownSystemVariable, ERNotSupportedYet, ERFeatureDisabled:
		return true
	}
	return false
}

// LoadDataRefusedCode reports whether code, the answer to a LOAD DATA
// LOCAL INFILE, says the server or the client library does not allow or
// support it: ERNotSupportedYet is vtgate's "LOAD is not supported on
// sharded keyspace", and ERNoDB vtgate's answer to a LOAD DATA into a
// table named with its database on a session without a default one
// (which the server routes INSERTs of by their names). ERUnknown may say
// so too, in its text only.
func LoadDataRefusedCode(code uint16) bool {
	switch code {
	case ERNotAllowedCommand, ERLoadInfileCapabilityDisab, ERClientLocalFilesDisabled,
		CRLoadDataLocalInfileReject, ERNotSupportedYet, ERNoDB:
		return true
	}
	return false
}

// IsConnLost reports whether err means the connection is gone and the only
// way on is to reconnect.
func IsConnLost(err error) bool {
	if err == nil {
		return false
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return ConnLostCode(me.Number)
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var ne net.Error
	return errors.Is(err, driver.ErrBadConn) ||
		errors.Is(err, mysql.ErrInvalidConn) ||
		errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNREFUSED) ||
		errors.As(err, &ne)
}
