package check

// Check describes one check id.
type Check struct {
	ID    string
	Group string
	What  string
}

// Catalogue lists every check in report order. The ids are stable: tools
// and tests match on them.
var Catalogue = []Check{
	{"binlog_off", "replication", "the source writes a binary log (log_bin)"},
	{"binlog_format", "replication", "binlog_format is ROW"},
	{"binlog_row_image", "replication", "binlog_row_image is FULL"},
	{"server_id", "replication", "the source has a server_id"},
	{"gtid_mode", "replication", "GTIDs, so that a tool can resume after a failover"},
	{"binlog_retention", "replication", "binary logs are kept longer than the copy takes"},
	{"migration_privileges", "replication", "the migration account may read the binary log and take a snapshot"},

	{"sql_mode", "behaviour", "sql_mode, and what each differing mode changes"},
	{"default_charset", "behaviour", "character_set_server"},
	{"default_collation", "behaviour", "collation_server"},
	{"lower_case_table_names", "behaviour", "how table names are stored and compared"},
	{"time_zone", "behaviour", "the default time zone"},
	{"time_zone_tables", "behaviour", "named time zones (the time zone tables) are loaded"},
	{"explicit_defaults_for_timestamp", "behaviour", "TIMESTAMP columns' implicit defaults"},
	{"transaction_isolation", "behaviour", "the default isolation level"},
	{"autocommit", "behaviour", "the default autocommit"},
	{"max_allowed_packet", "behaviour", "the largest statement or row the server accepts"},
	{"group_concat_max_len", "behaviour", "where GROUP_CONCAT results are cut"},
	{"default_auth_plugin", "behaviour", "the plugin new accounts authenticate with"},
	{"auth_plugin", "behaviour", "every account's authentication plugin exists on the target"},

	{"missing_database", "objects", "databases on the source but not (yet) on the target"},
	{"missing_table", "objects", "tables missing on the target"},
	{"missing_column", "objects", "columns missing on the target"},
	{"column_differs", "objects", "columns defined differently (type, nullability, default, charset, collation)"},
	{"key_differs", "objects", "primary keys that differ"},
	{"missing_index", "objects", "indexes missing on the target"},
	{"missing_foreign_key", "objects", "foreign keys missing on the target"},
	{"foreign_key_differs", "objects", "foreign keys defined differently (columns, referenced table and columns, ON DELETE, ON UPDATE) or named differently"},
	{"missing_view", "objects", "views missing on the target"},
	{"missing_routine", "objects", "stored procedures and functions missing on the target"},
	{"missing_trigger", "objects", "triggers missing on the target"},
	{"missing_event", "objects", "events missing on the target"},
	{"routine_differs", "objects", "stored procedures and functions defined differently (body, parameters, security, definer; sql_mode and character sets)"},
	{"event_differs", "objects", "events defined differently (body, schedule, status, definer, time zone; sql_mode and character sets)"},
	{"extra_object", "objects", "objects only on the target"},
	{"missing_account", "accounts", "accounts missing on the target"},
	{"fewer_privileges", "accounts", "accounts that may do less on the target"},
	{"unknown_privilege", "accounts", "privileges the target does not have"},
	{"extra_account", "accounts", "accounts only on the target"},

	{"missing_charset", "target", "character sets in use that the target lacks"},
	{"missing_collation", "target", "collations in use that the target lacks"},
	{"reserved_word", "target", "names reserved by the target's version"},
	{"engine", "target", "tables in engines other than InnoDB"},
	{"unsupported_feature", "target", "features the target's flavour and version lack"},
	{"zero_date", "target", "zero dates that the target's sql_mode rejects"},
	{"auto_increment_near_max", "target", "AUTO_INCREMENT columns near their type's maximum"},
	{"write_set_limit", "target", "tables a single statement cannot change whole on a cluster (its write-set limits)"},
	{"table_locks", "target", "explicit table locks (LOCK TABLES, FLUSH TABLES WITH READ LOCK) the source takes, which a cluster does not hold cluster-wide"},

	{"no_primary_key", "keys", "tables without a primary key"},

	{"stale_statistics", "after the copy", "target tables whose statistics are missing or far from the row count"},
}
