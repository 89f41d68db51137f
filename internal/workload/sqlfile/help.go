package sqlfile

// helpText is the statement file's language, as "shakedown run sql --help"
// shows it: the one place a user reads it, so it is complete.
const helpText = `Runs the statements of a file (--file), such as SQL captured from an
application, as a timed, rate-limited load, and reports each statement's count,
latency and errors besides the run's totals.

  shakedown prepare sql --target URL --file load.sql --prepare-file schema.sql
  shakedown run sql --target URL --file load.sql --threads 16 --time 60

The statement file
  Statements end with ';' (--delimiter changes it; a "DELIMITER xx" line does
  too, as in the mysql client). Quotes, backticks and comments are understood.
  Each event of the run is one statement picked at random; a statement weighs 1
  unless a comment line before it says otherwise. @name names it in the report:

    -- @weight 10
    SELECT name FROM users WHERE id = {{zipf 1 1000000}};
    -- @name top_orders
    SELECT * FROM orders WHERE user_id = {{uniform 1 1000000}} ORDER BY id DESC LIMIT 10;

  A group of statements that runs in order as one event (a transaction) starts
  with an @event line and lasts until the next @event line:

    -- @event pay weight=2
    BEGIN;
    UPDATE account SET balance = balance - 1 WHERE id = {{uid = uniform 1 100000}};
    INSERT INTO ledger (account_id, amount) VALUES ({{uid}}, -1);
    COMMIT;

  When a statement of a group that began with BEGIN or START TRANSACTION fails,
  ROLLBACK is sent before the error is counted. --mix=sequence runs the events
  in file order instead, weights ignored.

Placeholders
  {{...}} stands for one value, drawn afresh each time the statement runs, and
  sent as a parameter of a prepared statement (or quoted into the text with
  --db-ps-mode=disable). A placeholder goes where a value goes, never inside
  quotes: write name = {{string 8}}, not name = '{{string 8}}'.

    {{uniform A B}}           a whole number in [A, B], every one as likely
    {{zipf A B}}              a whole number in [A, B], A the most frequent, with
                              exponent --rand-zipfian-exp; {{zipf A B 1.2}} sets it
    {{int A B}}               a whole number in [A, B] drawn as sysbench draws,
                              with --rand-type
    {{string N}}              N random lower-case letters
    {{column TABLE.COLUMN}}   a value of the column ({{column DB.TABLE.COLUMN}}),
                              read before the run from its first --column-rows rows
    {{file PATH}}             a line of the file (PATH relative to the statement file)

  {{NAME = GENERATOR ...}} draws a value and names it; {{NAME}} later in the
  same event sends the same value again. Values from a column or a file are
  sent as numbers when every one is a whole number, else as strings.

Data
  --prepare-file and --cleanup-file name plain SQL scripts that prepare and
  cleanup run (the tables and rows the statements need, and their removal).
`

// Help is the statement file's language, for "shakedown run sql --help".
func (g *generator) Help() string { return helpText }
