/*
 * fathom's flat C interface to WiredTiger. WiredTiger's API is tables of function pointers
 * (WT_CONNECTION, WT_SESSION, WT_CURSOR) whose layouts change between releases; compiled
 * against a release's own wiredtiger.h, these functions give every release one interface with
 * plain arguments. build.rs compiles it against Debian's header into fathom;
 * scripts/fetch-engine.sh compiles it against a fetched release's header into
 * libfathom_wt.so beside that release's libwiredtiger.so, which fathom loads at run time.
 *
 * Keys and values are raw bytes (key_format=u, value_format=u). A key or value set on a cursor
 * is read during the call that sets it; what a cursor returns stays valid until it moves or
 * resets.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <wiredtiger.h>

static WT_ITEM item(const void *data, size_t size) {
    WT_ITEM it;
    memset(&it, 0, sizeof(it));
    it.data = data;
    it.size = size;
    return it;
}

void fwt_version(int *major, int *minor, int *patch) { wiredtiger_version(major, minor, patch); }

const char *fwt_strerror(int code) { return wiredtiger_strerror(code); }

/* WT_NOTFOUND, WT_ROLLBACK and WT_PREPARE_CONFLICT of this release (0 for a release before
 * prepared transactions). */
void fwt_codes(int *notfound, int *rollback, int *prepare_conflict) {
    *notfound = WT_NOTFOUND;
    *rollback = WT_ROLLBACK;
#ifdef WT_PREPARE_CONFLICT
    *prepare_conflict = WT_PREPARE_CONFLICT;
#else
    *prepare_conflict = 0;
#endif
}

int fwt_open(const char *home, const char *config, WT_CONNECTION **conn) {
    return wiredtiger_open(home, NULL, config, conn);
}

int fwt_close(WT_CONNECTION *conn) { return conn->close(conn, NULL); }

int fwt_open_session(WT_CONNECTION *conn, WT_SESSION **session) {
    return conn->open_session(conn, NULL, NULL, session);
}

int fwt_session_close(WT_SESSION *s) { return s->close(s, NULL); }

int fwt_create(WT_SESSION *s, const char *uri, const char *config) {
    return s->create(s, uri, config);
}

int fwt_checkpoint(WT_SESSION *s) { return s->checkpoint(s, NULL); }

int fwt_begin(WT_SESSION *s, const char *config) { return s->begin_transaction(s, config); }

int fwt_commit(WT_SESSION *s) { return s->commit_transaction(s, NULL); }

int fwt_rollback(WT_SESSION *s) { return s->rollback_transaction(s, NULL); }

int fwt_open_cursor(WT_SESSION *s, const char *uri, WT_CURSOR **cursor) {
    return s->open_cursor(s, uri, NULL, NULL, cursor);
}

int fwt_cursor_close(WT_CURSOR *c) { return c->close(c); }

int fwt_search_near(WT_CURSOR *c, const void *key, size_t key_len, int *exact) {
    WT_ITEM k = item(key, key_len);
    c->set_key(c, &k);
    return c->search_near(c, exact);
}

int fwt_insert(WT_CURSOR *c, const void *key, size_t key_len, const void *value,
  size_t value_len) {
    WT_ITEM k = item(key, key_len), v = item(value, value_len);
    c->set_key(c, &k);
    c->set_value(c, &v);
    return c->insert(c);
}

int fwt_remove(WT_CURSOR *c, const void *key, size_t key_len) {
    WT_ITEM k = item(key, key_len);
    c->set_key(c, &k);
    return c->remove(c);
}

int fwt_next(WT_CURSOR *c) { return c->next(c); }

int fwt_reset(WT_CURSOR *c) { return c->reset(c); }

/* The positioned entry's key and value, in one call. */
int fwt_entry(WT_CURSOR *c, const void **key, size_t *key_len, const void **value,
  size_t *value_len) {
    WT_ITEM k = item(NULL, 0), v = item(NULL, 0);
    int rc = c->get_key(c, &k);
    if (rc == 0)
        rc = c->get_value(c, &v);
    *key = k.data;
    *key_len = k.size;
    *value = v.data;
    *value_len = v.size;
    return rc;
}

/* Moves to the next entry (the previous one when `backwards`) and returns it, in one call. */
int fwt_step(WT_CURSOR *c, int backwards, const void **key, size_t *key_len, const void **value,
  size_t *value_len) {
    int rc = backwards ? c->prev(c) : c->next(c);
    return rc == 0 ? fwt_entry(c, key, key_len, value, value_len) : rc;
}

/* Searches for `key` and returns its value, in one call. */
int fwt_get(WT_CURSOR *c, const void *key, size_t key_len, const void **value,
  size_t *value_len) {
    WT_ITEM k = item(key, key_len), v = item(NULL, 0);
    int rc;
    c->set_key(c, &k);
    rc = c->search(c);
    if (rc == 0)
        rc = c->get_value(c, &v);
    *value = v.data;
    *value_len = v.size;
    return rc;
}

/* The statistics cursor's current entry: its description and value. */
int fwt_stat(WT_CURSOR *c, const char **description, int64_t *value) {
    const char *printable;
    return c->get_value(c, description, &printable, value);
}

/*
 * What the session did since the previous call, from its own statistics (those MongoDB's
 * slow-operation log prints): out[0] bytes read into the cache, out[1] microseconds reading
 * pages from disk, out[2] microseconds waiting for room in the cache (evicting, or waiting
 * for eviction), out[3] bytes written from the cache, out[4] microseconds waiting for the
 * data-handle and schema locks. `*cursor` is the session's statistics cursor, opened on the
 * first call and closed with the session; resetting it clears the session's statistics, so
 * each call returns what happened since the last. ENOTSUP for a release without session
 * statistics.
 */
int fwt_session_work(WT_SESSION *s, WT_CURSOR **cursor, int64_t *out) {
#if defined(WT_STAT_SESSION_BYTES_READ) && defined(WT_STAT_SESSION_CACHE_TIME)
    /* The cursor walks the session's statistics in key order from the first,
     * WT_STAT_SESSION_BYTES_READ: the walk's position is its key, and it stops at the last
     * one read (each call into WiredTiger costs tens of nanoseconds). */
    const int keys[] = {WT_STAT_SESSION_BYTES_READ, WT_STAT_SESSION_READ_TIME,
      WT_STAT_SESSION_CACHE_TIME, WT_STAT_SESSION_BYTES_WRITE, WT_STAT_SESSION_LOCK_DHANDLE_WAIT,
      WT_STAT_SESSION_LOCK_SCHEMA_WAIT};
    const int slot[] = {0, 1, 2, 3, 4, 4};
    WT_CURSOR *c = *cursor;
    int rc, key, last = 0;
    size_t i;
    uint64_t v;
    memset(out, 0, 5 * sizeof(*out));
    for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (keys[i] > last)
            last = keys[i];
    if (c == NULL) {
        rc = s->open_cursor(s, "statistics:session", NULL, NULL, &c);
        if (rc != 0)
            return rc;
        *cursor = c;
    }
    for (key = WT_STAT_SESSION_BYTES_READ; key <= last; key++) {
        if ((rc = c->next(c)) != 0 || (rc = c->get_value(c, NULL, NULL, &v)) != 0)
            return rc;
        for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
            if (keys[i] == key)
                out[slot[i]] += (int64_t)v;
    }
    return c->reset(c);
#else
    (void)s;
    (void)cursor;
    (void)out;
    return ENOTSUP;
#endif
}
