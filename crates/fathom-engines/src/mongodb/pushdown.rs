//! Indexes FerretDB's pushed-down filters can use. FerretDB 1.24's PostgreSQL handler sends a
//! filter on a field as `_jsonb->'f' @> value` (containment, with the field and the value as
//! parameters), while the indexes it makes are btrees on `(_jsonb->'f')`, which serve `=` and
//! ranges but never `@>`: every point read, update and delete by `_id` scanned the whole
//! collection in PostgreSQL. An event trigger in the PostgreSQL fathom starts gives every btree
//! index FerretDB makes a GIN index on each of its fields, which `@>` can use; custom plans
//! let the planner see the field (a generic plan, PostgreSQL's pick after five executions of
//! a cached statement, sees `_jsonb->$1` and matches no index). The GIN indexes keep no
//! pending list (`fastupdate = off`): with one, a lookup reads the list too, and the planner,
//! costing that, prefers a scan of a table whose documents are stored out of line (TOAST), a
//! scan it thinks cheap and that detoasts every document.

use postgres::NoTls;

/// The trigger's function: for each btree index made, a GIN index on each of its fields
/// (named by a hash of the table and field, so two indexes sharing a field make one).
const FUNCTION: &str = r#"
CREATE OR REPLACE FUNCTION fathom_pushdown_index() RETURNS event_trigger
LANGUAGE plpgsql AS $f$
DECLARE
  c record;
  k int;
  expr text;
  tbl regclass;
BEGIN
  FOR c IN SELECT objid FROM pg_event_trigger_ddl_commands()
           WHERE command_tag = 'CREATE INDEX' AND object_type = 'index' LOOP
    tbl := NULL;
    SELECT i.indrelid::regclass INTO tbl FROM pg_index i
      JOIN pg_class x ON x.oid = i.indexrelid JOIN pg_am am ON am.oid = x.relam
      WHERE i.indexrelid = c.objid AND am.amname = 'btree';
    CONTINUE WHEN tbl IS NULL;
    FOR k IN 1 .. (SELECT indnkeyatts FROM pg_index WHERE indexrelid = c.objid) LOOP
      expr := pg_get_indexdef(c.objid, k, false);
      CONTINUE WHEN expr NOT LIKE '((\_jsonb -> %';
      EXECUTE format('CREATE INDEX IF NOT EXISTS %I ON %s USING gin (%s) WITH (fastupdate = off)',
        'fathom_gin_' || md5(tbl::text || expr), tbl, expr);
    END LOOP;
  END LOOP;
END $f$
"#;

const TRIGGER: &str = "CREATE EVENT TRIGGER fathom_pushdown_index ON ddl_command_end \
                       WHEN TAG IN ('CREATE INDEX') EXECUTE FUNCTION fathom_pushdown_index()";

/// Installs the trigger in database `db` of the server at `address`, and custom plans for
/// its sessions; before FerretDB starts, so every collection it makes has the indexes.
pub fn install(address: &postgres::Config, db: &str) -> anyhow::Result<()> {
    let mut address = address.clone();
    let mut client = address.dbname(db).connect(NoTls)?;
    client.batch_execute(FUNCTION)?;
    client.batch_execute("DROP EVENT TRIGGER IF EXISTS fathom_pushdown_index")?;
    client.batch_execute(TRIGGER)?;
    let quoted = format!("\"{}\"", db.replace('"', "\"\""));
    client.batch_execute(&format!(
        "ALTER DATABASE {quoted} SET plan_cache_mode = force_custom_plan"
    ))?;
    Ok(())
}
