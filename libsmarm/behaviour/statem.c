/* SPDX-License-Identifier: MIT */
/*
 * statem.c - gen_statem as data: the checker the loader runs on every
 * machine table (smarm_sm_desc_t), the dispatch tables built from it,
 * and the interpreter that runs a table. What the checker refuses and
 * how a machine runs are docs/plugins.md's "What the loader checks" and
 * "The run" (here timeout rows may postpone too).
 *
 * The checker: one pass over the rows in matching order (POSTPONE rows
 * first, each group in table order) fills a cell per (kind, state,
 * operation) with the first unguarded row that takes it. A row that
 * finds none of its cells free is shadowed (SMARM_EUNREACHABLE); a cell
 * left empty for an event that can come is SMARM_ENOTEXHAUSTIVE.
 *
 * The interpreter: the loop feeds a machine (struct smarm_sm_ctx)
 * events (smarm__sm_step, smarm__sm_fire). Each goes to the first row
 * of its cell's candidate list whose guard passes. A POSTPONE row's
 * event joins m_post; any other row's action runs (UNHANDLED: then the
 * event is dropped) and its tail names the next state. A real
 * transition cancels the state timeout, runs the new state's enter and
 * moves m_post to the front of m_q; the action's next events (m_next)
 * go before them. No row: SHUTDOWN ends the machine, anything else is
 * dropped. m_q is drained before the next external event.
 *
 * Phases (m_phase): IDLE -> INIT (init) -> IDLE; IDLE -> ENTER
 * (sm_enter) -> IDLE; IDLE -> ACTION (sm_dispatch) -> IDLE; any -> DONE
 * (smarm__sm_fini). The smarm_sm_* calls check it (statem_api.c).
 *
 * Ownership: the checker keeps nothing; the tables belong to the
 * behaviour (built by its first machine, freed at unload); a machine to
 * its actor; each event the machine takes goes back to the loop through
 * sh_drop exactly once, but for one handled with nothing left to free or
 * answer (no call, no heap block).
 * Locking: none: tables are constant once built; a machine is touched
 * only by its own actor.
 * Invariants:
 *   INV-1 a checker cell, once set, holds the first unguarded row in
 *         matching order that takes its event: it is never overwritten.
 *   INV-2 after an event, m_q is: its next events, then (after a real
 *         transition) the events postponed before, in FIFO order, then
 *         what m_q held; so next events run before postponed ones, and
 *         both before any external event.
 *   INV-3 a timer's fire counts only while its generation is the live
 *         one (tm_gen); arming again or cancelling makes it stale.
 *         m_narmed counts the timers whose tm_gen is not 0. A timer
 *         armed with 0 starts no timer (OTP): when its callback is done
 *         its event joins the back of m_q (an event timeout is cancelled
 *         by the events queued instead), so it runs before any external
 *         event; it carries its generation (ev_seq) and counts only if
 *         still live then.
 *   INV-4 while an event's guards or action run, m_cur names it and no
 *         queue holds it: a machine ending then hands it to sh_drop from
 *         m_cur; at any other time every event the machine holds is in
 *         m_q, m_post or m_next.
 * See: docs/plugins.md (gen_statem).
 */
#include "statem.h"

#include "bhv.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The most states a machine declares (keeps the cell map small). */
#define SM_STATES_MAX 4096

/* The kinds, for the cell map: index by kind - 1. */
#define SM_NKINDS 8

/* Whether rows of kind carry an operation index (CAST, CALL, INFO). */
static bool sm_kind_is_op(int kind)
{
	return kind == SMARM_SM_CAST || kind == SMARM_SM_CALL ||
	       kind == SMARM_SM_INFO;
}

static bool sm_kind_is_timeout(int kind)
{
	return kind == SMARM_SM_STATE_TIMEOUT ||
	       kind == SMARM_SM_EVENT_TIMEOUT || kind == SMARM_SM_TIMEOUT;
}

struct sm_chk {
	const smarm_sm_desc_t *c_d;	  /* the machine */
	const struct smarm__sm_op *c_ops; /* its operations */
	size_t c_nops;			  /* count of c_ops */
	size_t c_width[SM_NKINDS];	  /* slots per state, by kind - 1 */
	int32_t *c_cell[SM_NKINDS]; /* [state * width + slot]: row or -1 */
	char *c_msg;		    /* failure message, or NULL */
	size_t c_msglen;	    /* its size */
};

__attribute__((format(printf, 3, 4))) static int
sm_fail(struct sm_chk *c, int rc, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (c->c_msg == NULL || c->c_msglen == 0)
		return rc;
	n = snprintf(c->c_msg, c->c_msglen,
		     "machine %s: ", c->c_d->name != NULL ? c->c_d->name : "?");
	if (n < 0 || (size_t)n >= c->c_msglen)
		return rc;
	va_start(ap, fmt);
	vsnprintf(c->c_msg + n, c->c_msglen - (size_t)n, fmt, ap);
	va_end(ap);
	return rc;
}

static const char *sm_state_name(const struct sm_chk *c, int32_t s)
{
	if (s == SMARM_SM_ANY)
		return "any";
	return c->c_d->state_names[s];
}

/* The name of slot `slot` of kind (an operation, a timeout, or none). */
static const char *sm_slot_name(const struct sm_chk *c, int kind, size_t slot)
{
	if (sm_kind_is_op(kind)) {
		for (size_t i = 0; i < c->c_nops; i++)
			if (c->c_ops[i].so_kind == kind && slot-- == 0)
				return c->c_ops[i].so_name;
		return "?";
	}
	if (kind == SMARM_SM_TIMEOUT)
		return c->c_d->timeouts[slot];
	return "";
}

/* The name a row's op gives, for messages ("any" for NULL). */
static const char *sm_row_op(const smarm_sm_row_t *r)
{
	if (sm_kind_is_op(r->kind) || r->kind == SMARM_SM_TIMEOUT)
		return r->op != NULL ? r->op : "any";
	return "";
}

/* The slot of row r's op among its kind's; -1: any (op NULL); -2: the
 * op names nothing of that kind. */
static long sm_row_slot(const struct sm_chk *c, const smarm_sm_row_t *r)
{
	long slot = 0;

	if (r->op == NULL)
		return -1;
	if (sm_kind_is_op(r->kind)) {
		for (size_t i = 0; i < c->c_nops; i++) {
			if (c->c_ops[i].so_kind != r->kind)
				continue;
			if (strcmp(c->c_ops[i].so_name, r->op) == 0)
				return slot;
			slot++;
		}
		return -2;
	}
	if (r->kind == SMARM_SM_TIMEOUT) {
		for (size_t i = 0; i < c->c_d->n_timeouts; i++)
			if (strcmp(c->c_d->timeouts[i], r->op) == 0)
				return (long)i;
		return -2;
	}
	return -2; /* a kind without names: op must be NULL */
}

/* Slots per state of each kind into w[kind - 1] (its operations, its
 * timeouts, or one); slot[i] (may be NULL): operation i's slot. */
static void sm_widths(const smarm_sm_desc_t *d, const struct smarm__sm_op *ops,
		      size_t n_ops, size_t *w, int32_t *slot)
{
	for (int kind = 1; kind <= SM_NKINDS; kind++)
		w[kind - 1] = kind == SMARM_SM_TIMEOUT ? d->n_timeouts
			      : sm_kind_is_op(kind)    ? 0
						       : 1;
	for (size_t i = 0; i < n_ops; i++) {
		size_t s = w[ops[i].so_kind - 1]++;
		if (slot != NULL)
			slot[i] = (int32_t)s;
	}
}

/* Part 1 for the descriptor's own fields. */
static int sm_check_fields(struct sm_chk *c)
{
	const smarm_sm_desc_t *d = c->c_d;

	if (d->n_states == 0 || d->n_states > SM_STATES_MAX)
		return sm_fail(c, SMARM_EPROTOCOL, "n_states is %u (1..%d)",
			       d->n_states, SM_STATES_MAX);
	if (d->state_names == NULL)
		return sm_fail(c, SMARM_EPROTOCOL, "state_names is NULL");
	for (uint32_t s = 0; s < d->n_states; s++)
		if (d->state_names[s] == NULL)
			return sm_fail(c, SMARM_EPROTOCOL,
				       "state %u has no name", s);
	if (d->initial < 0 || (uint32_t)d->initial >= d->n_states)
		return sm_fail(c, SMARM_EPROTOCOL,
			       "initial state %d out of range", d->initial);
	if ((d->flags & ~(uint32_t)(SMARM_SM_F_STATE_TIMEOUT |
				    SMARM_SM_F_EVENT_TIMEOUT)) != 0)
		return sm_fail(c, SMARM_EPROTOCOL, "unknown flags 0x%x",
			       d->flags);
	if (d->n_timeouts > 0 && d->timeouts == NULL)
		return sm_fail(c, SMARM_EPROTOCOL, "timeouts is NULL");
	if (d->n_timeouts > SMARM_OPS_MAX)
		return sm_fail(c, SMARM_EPROTOCOL,
			       "%zu timeout names (at most %d)", d->n_timeouts,
			       SMARM_OPS_MAX);
	for (size_t i = 0; i < d->n_timeouts; i++) {
		const char *t = d->timeouts[i];
		size_t len = t != NULL ? strlen(t) : 0;
		if (len == 0 || len > SMARM_OP_NAME_MAX)
			return sm_fail(c, SMARM_EPROTOCOL,
				       "timeout name %zu empty or too long", i);
		for (size_t j = 0; j < i; j++)
			if (strcmp(d->timeouts[j], t) == 0)
				return sm_fail(c, SMARM_EPROTOCOL,
					       "timeout name %s declared twice",
					       t);
	}
	if (d->n_rows > 0 && d->rows == NULL)
		return sm_fail(c, SMARM_EPROTOCOL, "rows is NULL");
	return 0;
}

/* Part 1 for row i. */
static int sm_check_row(struct sm_chk *c, size_t i)
{
	const smarm_sm_desc_t *d = c->c_d;
	const smarm_sm_row_t *r = &d->rows[i];
	const char *kn = smarm__bhv_kind_name(r->kind);

	if (r->state != SMARM_SM_ANY &&
	    (r->state < 0 || (uint32_t)r->state >= d->n_states))
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu: state %d out of range", i, r->state);
	if (r->kind < SMARM_SM_CAST || r->kind > SMARM_SM_EXIT)
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s): unknown kind %d", i,
			       sm_state_name(c, r->state), r->kind);
	if (r->tail < SMARM_SM_TO || r->tail > SMARM_SM_REPEAT)
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s, %s %s): unknown tail %d", i,
			       sm_state_name(c, r->state), kn, sm_row_op(r),
			       r->tail);
	if (r->tail == SMARM_SM_POSTPONE && !sm_kind_is_op(r->kind) &&
	    !sm_kind_is_timeout(r->kind))
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s, %s %s): only cast, call, "
			       "info and timeout rows may postpone",
			       i, sm_state_name(c, r->state), kn, sm_row_op(r));
	if (r->tail == SMARM_SM_TO &&
	    (r->target < 0 || (uint32_t)r->target >= d->n_states))
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s, %s %s): target %d out of "
			       "range",
			       i, sm_state_name(c, r->state), kn, sm_row_op(r),
			       r->target);
	if (r->tail == SMARM_SM_DYNAMIC && r->action == NULL)
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s, %s %s): a dynamic tail "
			       "needs an action",
			       i, sm_state_name(c, r->state), kn, sm_row_op(r));
	if (r->op != NULL && sm_row_slot(c, r) == -2) {
		if (sm_kind_is_op(r->kind))
			return sm_fail(c, SMARM_EPROTOCOL,
				       "row %zu (state %s): no %s operation "
				       "%s in the protocol",
				       i, sm_state_name(c, r->state), kn,
				       r->op);
		if (r->kind == SMARM_SM_TIMEOUT)
			return sm_fail(c, SMARM_EPROTOCOL,
				       "row %zu (state %s): timeout %s is not "
				       "declared",
				       i, sm_state_name(c, r->state), r->op);
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s, %s): op must be NULL", i,
			       sm_state_name(c, r->state), kn);
	}
	return 0;
}

/* Parts 2 and 3 for row i, in matching order: a row none of whose cells
 * is free is shadowed; an unguarded row takes the free ones (INV-1). */
static int sm_place_row(struct sm_chk *c, size_t i)
{
	const smarm_sm_desc_t *d = c->c_d;
	const smarm_sm_row_t *r = &d->rows[i];
	size_t k = (size_t)r->kind - 1;
	size_t w = c->c_width[k];
	long slot = sm_row_slot(c, r);
	uint32_t s0 = r->state == SMARM_SM_ANY ? 0 : (uint32_t)r->state;
	uint32_t s1 = r->state == SMARM_SM_ANY ? d->n_states : s0 + 1;
	size_t o0 = slot >= 0 ? (size_t)slot : 0;
	size_t o1 = slot >= 0 ? o0 + 1 : w;
	int32_t by = -1;
	bool live = false;

	for (uint32_t s = s0; s < s1; s++) {
		for (size_t o = o0; o < o1; o++) {
			int32_t *cell = &c->c_cell[k][(size_t)s * w + o];
			if (*cell < 0) {
				live = true;
				if (r->guard == NULL)
					*cell = (int32_t)i;
			} else if (by < 0) {
				by = *cell;
			}
		}
	}
	if (live)
		return 0;
	if (by < 0)
		return sm_fail(c, SMARM_EUNREACHABLE,
			       "row %zu (state %s, %s %s) matches no event: %s",
			       i, sm_state_name(c, r->state),
			       smarm__bhv_kind_name(r->kind), sm_row_op(r),
			       r->kind == SMARM_SM_TIMEOUT
				       ? "no timeout is declared"
				       : "the protocol has no operation of "
					 "that kind");
	return sm_fail(c, SMARM_EUNREACHABLE,
		       "row %zu (state %s, %s %s) is shadowed by earlier "
		       "unguarded rows (row %d first)",
		       i, sm_state_name(c, r->state),
		       smarm__bhv_kind_name(r->kind), sm_row_op(r), (int)by);
}

/* Part 3: the first event of a state that no row always takes. */
static int sm_check_exhaustive(struct sm_chk *c)
{
	static const int kinds[] = { SMARM_SM_CAST, SMARM_SM_CALL,
				     SMARM_SM_STATE_TIMEOUT,
				     SMARM_SM_EVENT_TIMEOUT, SMARM_SM_TIMEOUT };
	const smarm_sm_desc_t *d = c->c_d;

	for (uint32_t s = 0; s < d->n_states; s++) {
		for (size_t j = 0; j < sizeof kinds / sizeof kinds[0]; j++) {
			int kind = kinds[j];
			size_t k = (size_t)kind - 1;
			size_t w = c->c_width[k];
			if (kind == SMARM_SM_STATE_TIMEOUT &&
			    !(d->flags & SMARM_SM_F_STATE_TIMEOUT))
				continue;
			if (kind == SMARM_SM_EVENT_TIMEOUT &&
			    !(d->flags & SMARM_SM_F_EVENT_TIMEOUT))
				continue;
			for (size_t o = 0; o < w; o++) {
				const char *on = sm_slot_name(c, kind, o);
				if (c->c_cell[k][(size_t)s * w + o] >= 0)
					continue;
				return sm_fail(c, SMARM_ENOTEXHAUSTIVE,
					       "state %s has no unguarded row "
					       "for %s%s%s (rows 0..%zu)",
					       d->state_names[s],
					       smarm__bhv_kind_name(kind),
					       on[0] ? " " : "", on,
					       d->n_rows > 0 ? d->n_rows - 1
							     : 0);
			}
		}
	}
	return 0;
}

int smarm__sm_check_ops(const smarm_sm_desc_t *d,
			const struct smarm__sm_op *ops, size_t n_ops, char *msg,
			size_t msglen)
{
	struct sm_chk c = { .c_d = d,
			    .c_ops = ops,
			    .c_nops = n_ops,
			    .c_msg = msg,
			    .c_msglen = msglen };
	int rc;

	if (d == NULL || (n_ops > 0 && ops == NULL))
		return SMARM_EINVAL;
	if (msg != NULL && msglen > 0)
		msg[0] = '\0';
	rc = sm_check_fields(&c);
	if (rc != 0)
		return rc;
	for (size_t i = 0; i < d->n_rows; i++) {
		rc = sm_check_row(&c, i);
		if (rc != 0)
			return rc;
	}
	sm_widths(d, ops, n_ops, c.c_width, NULL);
	for (int k = 0; k < SM_NKINDS; k++) {
		/* +1: malloc of 0 may return NULL */
		size_t sz = ((size_t)d->n_states * c.c_width[k] + 1) *
			    sizeof(int32_t);
		c.c_cell[k] = malloc(sz);
		if (c.c_cell[k] == NULL) {
			rc = SMARM_ENOMEM;
			goto out_free;
		}
		memset(c.c_cell[k], 0xff, sz);
	}
	/* Matching order: POSTPONE rows first, then the rest. */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (size_t i = 0; i < d->n_rows && rc == 0; i++) {
			bool pp = d->rows[i].tail == SMARM_SM_POSTPONE;
			if (pp == (pass == 0))
				rc = sm_place_row(&c, i);
		}
	}
	if (rc == 0)
		rc = sm_check_exhaustive(&c);
out_free:
	for (int k = 0; k < SM_NKINDS; k++)
		free(c.c_cell[k]);
	return rc;
}

int smarm__sm_ops_of(const struct bhv_proto *p, struct smarm__sm_op *ops)
{
	if (p->pr_n > SMARM_OPS_MAX)
		return SMARM_EPROTOCOL;
	for (size_t i = 0; i < p->pr_n; i++) {
		ops[i].so_name = p->pr_ops[i].op_name;
		ops[i].so_kind = p->pr_ops[i].op_kind;
	}
	return 0;
}

int smarm__sm_check(const smarm_sm_desc_t *d, const struct bhv_proto *p,
		    char *msg, size_t msglen)
{
	struct smarm__sm_op ops[SMARM_OPS_MAX];

	if (d == NULL || p == NULL)
		return SMARM_EINVAL;
	if (smarm__sm_ops_of(p, ops) != 0)
		return SMARM_EPROTOCOL;
	return smarm__sm_check_ops(d, ops, p->pr_n, msg, msglen);
}

/* ==== The dispatch tables ==== */

/* Past this many candidate list entries in all, the tables keep only
 * the matching order, scanned per event. */
#define SM_LIST_MAX ((size_t)1 << 20)

struct smarm__sm_tables {
	const smarm_sm_desc_t *st_d;   /* the machine */
	int32_t *st_slot;	       /* op index -> slot among its kind */
	size_t st_width[SM_NKINDS];    /* slots per state, by kind - 1 */
	long *st_rslot;		       /* row -> its slot (-1: any) */
	uint32_t *st_ord;	       /* rows in matching order */
	uint32_t *st_start[SM_NKINDS]; /* cell -> offset in st_list */
	uint32_t *st_list;	       /* candidate rows, each list ends
					  with UINT32_MAX; NULL: scan */
};

static bool sm_row_takes(const struct smarm__sm_tables *t, size_t i, int kind,
			 int32_t state, long slot)
{
	const smarm_sm_row_t *r = &t->st_d->rows[i];
	return r->kind == kind &&
	       (r->state == SMARM_SM_ANY || r->state == state) &&
	       (t->st_rslot[i] < 0 || t->st_rslot[i] == slot);
}

void smarm__sm_tables_free(struct smarm__sm_tables *t)
{
	if (t == NULL)
		return;
	free(t->st_slot);
	free(t->st_rslot);
	free(t->st_ord);
	for (int k = 0; k < SM_NKINDS; k++)
		free(t->st_start[k]);
	free(t->st_list);
	free(t);
}

/* The total length of t's candidate lists (each cell's rows of the n in
 * st_ord, then UINT32_MAX), counted until past SM_LIST_MAX; written too
 * once st_list and st_start are. */
static size_t sm_lists(struct smarm__sm_tables *t, size_t n)
{
	size_t at = 0;
	for (int k = 0; k < SM_NKINDS && at <= SM_LIST_MAX; k++) {
		size_t w = t->st_width[k];
		size_t cells = (size_t)t->st_d->n_states * w;
		for (size_t cell = 0; cell < cells; cell++) {
			if (t->st_list != NULL)
				t->st_start[k][cell] = (uint32_t)at;
			for (size_t j = 0; j < n; j++) {
				if (!sm_row_takes(t, t->st_ord[j], k + 1,
						  (int32_t)(cell / w),
						  (long)(cell % w)))
					continue;
				if (t->st_list != NULL)
					t->st_list[at] = t->st_ord[j];
				at++;
			}
			if (t->st_list != NULL)
				t->st_list[at] = UINT32_MAX;
			at++;
		}
	}
	return at;
}

int smarm__sm_tables_build(const smarm_sm_desc_t *d,
			   const struct smarm__sm_op *ops, size_t n_ops,
			   struct smarm__sm_tables **out)
{
	struct smarm__sm_tables *t = calloc(1, sizeof *t);
	struct sm_chk c = { .c_d = d, .c_ops = ops, .c_nops = n_ops };
	size_t n = 0, total;

	if (t == NULL)
		return SMARM_ENOMEM;
	t->st_d = d;
	t->st_slot = calloc(n_ops + 1, sizeof *t->st_slot);
	t->st_rslot = calloc(d->n_rows + 1, sizeof *t->st_rslot);
	t->st_ord = calloc(d->n_rows + 1, sizeof *t->st_ord);
	if (t->st_slot == NULL || t->st_rslot == NULL || t->st_ord == NULL)
		goto err_free;
	sm_widths(d, ops, n_ops, t->st_width, t->st_slot);
	for (size_t i = 0; i < d->n_rows; i++)
		t->st_rslot[i] = sm_row_slot(&c, &d->rows[i]);
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < d->n_rows; i++)
			if ((d->rows[i].tail == SMARM_SM_POSTPONE) ==
			    (pass == 0))
				t->st_ord[n++] = (uint32_t)i;
	/* Size the lists; past SM_LIST_MAX events scan st_ord instead. */
	total = sm_lists(t, n);
	if (total <= SM_LIST_MAX) {
		t->st_list = malloc((total + 1) * sizeof *t->st_list);
		if (t->st_list == NULL)
			goto err_free;
		for (int k = 0; k < SM_NKINDS; k++) {
			t->st_start[k] = malloc(
				((size_t)d->n_states * t->st_width[k] + 1) *
				sizeof *t->st_start[k]);
			if (t->st_start[k] == NULL)
				goto err_free;
		}
		(void)sm_lists(t, n); /* now writes them */
	}
	*out = t;
	return 0;
err_free:
	smarm__sm_tables_free(t);
	return SMARM_ENOMEM;
}

/* ==== The interpreter ==== */

/* The first row that takes ev in m's state (guards run), or -1. */
static long sm_match(struct smarm_sm_ctx *m, const struct smarm__sm_ev *ev)
{
	const struct smarm__sm_tables *t = m->m_t;
	const smarm_sm_row_t *rows = m->m_d->rows;
	int k = ev->ev_kind - 1;
	long slot = 0;

	if (sm_kind_is_op(ev->ev_kind))
		slot = t->st_slot[ev->ev_op];
	else if (ev->ev_kind == SMARM_SM_TIMEOUT)
		slot = ev->ev_op;
	if (t->st_list != NULL) {
		size_t cell =
			(size_t)m->m_state * t->st_width[k] + (size_t)slot;
		for (const uint32_t *p = &t->st_list[t->st_start[k][cell]];
		     *p != UINT32_MAX; p++)
			if (rows[*p].guard == NULL ||
			    m->m_h->sh_guard(m, rows[*p].guard, ev))
				return (long)*p;
		return -1;
	}
	for (size_t j = 0; j < m->m_d->n_rows; j++) {
		uint32_t i = t->st_ord[j];
		if (!sm_row_takes(t, i, ev->ev_kind, m->m_state, slot))
			continue;
		if (rows[i].guard == NULL ||
		    m->m_h->sh_guard(m, rows[i].guard, ev))
			return (long)i;
	}
	return -1;
}

static int sm_push(struct smarm__ring *r, const struct smarm__sm_ev *ev)
{
	const size_t esz = sizeof *ev;
	int rc = smarm__ring_grow(r, esz, smarm__ring_len(r) + 1, 8);
	if (rc != 0)
		return rc;
	memcpy(smarm__ring_push_back(r, esz), ev, esz);
	return 0;
}

/* Move every event of from to the front of to, in order. */
static int sm_prepend(struct smarm__ring *to, struct smarm__ring *from)
{
	const size_t esz = sizeof(struct smarm__sm_ev);
	uint32_t k = smarm__ring_len(from);
	int rc;

	if (k == 0)
		return 0;
	rc = smarm__ring_grow(to, esz, smarm__ring_len(to) + k, 8);
	if (rc != 0)
		return rc;
	for (uint32_t i = k; i-- > 0;)
		smarm__ring_push_front_n(to, esz, smarm__ring_at(from, esz, i),
					 1);
	smarm__ring_set_len(from, 0);
	from->rg_head = 0;
	return 0;
}

/* Run state's enter (from prev); its next events are refused. */
static void sm_enter(struct smarm_sm_ctx *m, int32_t prev)
{
	void (*fn)(void *, smarm_sm_ctx_t *, int32_t, int32_t);

	if (m->m_d->enter == NULL)
		return;
	fn = m->m_d->enter[m->m_state];
	if (fn == NULL)
		return;
	do { /* again while it asks (smarm_sm_repeat_state) */
		m->m_reenter = false;
		m->m_phase = SMARM__SM_ENTER;
		fn(m->m_data, m, m->m_state, prev);
		m->m_phase = SMARM__SM_IDLE;
	} while (m->m_reenter && !m->m_stop);
	m->m_reenter = false;
}

/* A real transition to next: cancel the state timeout, enter, queue the
 * postponed events before m_q (INV-2). */
static void sm_transition(struct smarm_sm_ctx *m, int32_t next)
{
	int32_t prev = m->m_state;

	m->m_state = next;
	if (m->m_narmed != 0)
		smarm__sm_disarm(m, SMARM__SM_TM_STATE);
	sm_enter(m, prev);
	if (smarm__ring_len(&m->m_post) > 0 &&
	    sm_prepend(&m->m_q, &m->m_post) != 0)
		m->m_stop = m->m_crash = true;
}

/* The event of timer which (a named timeout's carries its index). */
static struct smarm__sm_ev sm_timer_ev(int which)
{
	struct smarm__sm_ev e = { .ev_op = -1 };
	e.ev_kind = which == SMARM__SM_TM_STATE	  ? SMARM_SM_STATE_TIMEOUT
		    : which == SMARM__SM_TM_EVENT ? SMARM_SM_EVENT_TIMEOUT
						  : SMARM_SM_TIMEOUT;
	if (which >= SMARM__SM_TM_NAMED)
		e.ev_op = which - SMARM__SM_TM_NAMED;
	return e;
}

/* Queue the events of the timers armed with 0 since the last look (INV-3). */
static void sm_zero_flush(struct smarm_sm_ctx *m)
{
	size_t n = SMARM__SM_TM_NAMED + m->m_d->n_timeouts;
	for (size_t w = 0; w < n && m->m_narmed != 0; w++) {
		struct smarm__sm_timer *tm = &m->m_tm[w];
		struct smarm__sm_ev e = sm_timer_ev((int)w);
		if (tm->tm_gen == 0 || !tm->tm_zero || tm->tm_queued)
			continue;
		if (w == SMARM__SM_TM_EVENT && smarm__ring_len(&m->m_q) > 0) {
			smarm__sm_disarm(m, (int)w); /* events came first */
			continue;
		}
		e.ev_seq = tm->tm_gen;
		if (sm_push(&m->m_q, &e) != 0) {
			m->m_stop = m->m_crash = true;
			return;
		}
		tm->tm_queued = true;
	}
}

/* A zero timer's event taken from m_q: false if it went stale. */
static bool sm_zero_live(struct smarm_sm_ctx *m, const struct smarm__sm_ev *e)
{
	int which = e->ev_kind == SMARM_SM_STATE_TIMEOUT ? SMARM__SM_TM_STATE
		    : e->ev_kind == SMARM_SM_EVENT_TIMEOUT
			    ? SMARM__SM_TM_EVENT
			    : SMARM__SM_TM_NAMED + e->ev_op;
	struct smarm__sm_timer *tm = &m->m_tm[which];
	if (tm->tm_gen != e->ev_seq || !tm->tm_zero)
		return false;
	tm->tm_gen = 0;
	tm->tm_zero = tm->tm_queued = false;
	m->m_narmed--;
	return true;
}

/* Is e a zero timer's event (sm_zero_flush), not a fire or next_event? */
static bool sm_is_zero_event(const struct smarm__sm_ev *e)
{
	return e->ev_seq != 0 && e->ev_call == NULL &&
	       sm_kind_is_timeout(e->ev_kind);
}

/* A callback is done: its next events go before anything queued (INV-2),
 * then the events of timeouts it armed with 0 (INV-3). */
static inline void sm_callback_done(struct smarm_sm_ctx *m)
{
	if (smarm__ring_len(&m->m_next) > 0 &&
	    sm_prepend(&m->m_q, &m->m_next) != 0)
		m->m_stop = m->m_crash = true;
	if (m->m_narmed != 0)
		sm_zero_flush(m);
}

static void sm_dispatch(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev)
{
	const smarm_sm_row_t *r;
	int32_t next;
	int32_t ret = 0;
	long i;

	if (m->m_narmed != 0 && ev->ev_kind != SMARM_SM_EVENT_TIMEOUT)
		smarm__sm_disarm(m, SMARM__SM_TM_EVENT);
	/* m_cur names the event while guards and the action run, so a
	 * machine that ends inside them still answers it (INV-4). */
	m->m_cur = ev;
	i = sm_match(m, ev);
	if (i < 0) {
		/* The built-in rows: SHUTDOWN stops, the rest is dropped. */
		if (ev->ev_kind == SMARM_SM_SHUTDOWN)
			m->m_stop = true;
		m->m_cur = NULL;
		m->m_h->sh_drop(m, ev, SMARM_EDOWN);
		return;
	}
	r = &m->m_d->rows[i];
	if (r->tail == SMARM_SM_POSTPONE) {
		m->m_cur = NULL;
		/* A zero timer's event replays as a plain timeout event. */
		if (ev->ev_call == NULL && sm_kind_is_timeout(ev->ev_kind))
			ev->ev_seq = 0;
		if (sm_push(&m->m_post, ev) != 0) {
			m->m_stop = m->m_crash = true;
			m->m_h->sh_drop(m, ev, SMARM_EDOWN);
		}
		return;
	}
	if (r->action != NULL) {
		m->m_phase = SMARM__SM_ACTION;
		ret = m->m_h->sh_action(m, r->action, ev);
		m->m_phase = SMARM__SM_IDLE;
	}
	m->m_cur = NULL;
	/* Handled, no call to answer and no heap block: nothing to drop. */
	if (r->tail == SMARM_SM_UNHANDLED || ev->ev_call != NULL ||
	    ev->ev_kind == SMARM_SM_EXIT || ev->ev_args.mg_heap != NULL)
		m->m_h->sh_drop(
			m, ev, r->tail == SMARM_SM_UNHANDLED ? SMARM_EDOWN : 0);
	next = m->m_state;
	switch (r->tail) {
	case SMARM_SM_TO:
		next = r->target;
		break;
	case SMARM_SM_DYNAMIC:
		if (ret < 0 || (uint32_t)ret >= m->m_d->n_states) {
			/* A state that does not exist: the plugin's bug. */
			m->m_stop = m->m_crash = true;
			return;
		}
		next = ret;
		break;
	case SMARM_SM_STOP:
		m->m_stop = true;
		break;
	default:
		break;
	}
	if (!m->m_stop && next != m->m_state)
		sm_transition(m, next);
	else if (!m->m_stop && r->tail == SMARM_SM_REPEAT)
		sm_enter(m, m->m_state);
	sm_callback_done(m);
}

static bool sm_drain(struct smarm_sm_ctx *m)
{
	const size_t esz = sizeof(struct smarm__sm_ev);

	while (!m->m_stop && smarm__ring_len(&m->m_q) > 0) {
		struct smarm__sm_ev e;
		memcpy(&e, smarm__ring_pop_front(&m->m_q, esz), esz);
		if (sm_is_zero_event(&e) && !sm_zero_live(m, &e))
			continue; /* re-armed or cancelled since (INV-3) */
		sm_dispatch(m, &e);
	}
	return m->m_stop;
}

int smarm__sm_init(struct smarm_sm_ctx *m, const smarm_sm_desc_t *d,
		   const struct smarm__sm_tables *t,
		   const struct smarm__sm_hooks *h, void *data)
{
	memset(m, 0, sizeof *m);
	m->m_tm = calloc(SMARM__SM_TM_NAMED + d->n_timeouts, sizeof *m->m_tm);
	if (m->m_tm == NULL)
		return SMARM_ENOMEM;
	m->m_magic = SMARM__SM_MAGIC;
	m->m_d = d;
	m->m_t = t;
	m->m_h = h;
	m->m_data = data;
	m->m_state = d->initial;
	return 0;
}

void smarm__sm_start(struct smarm_sm_ctx *m)
{
	sm_enter(m, m->m_state);
	/* init's next events, before any external event (OTP's) */
	sm_callback_done(m);
	sm_drain(m);
}

bool smarm__sm_step(struct smarm_sm_ctx *m, struct smarm__sm_ev *ev)
{
	sm_dispatch(m, ev);
	/* Most events queue none: no call to drain an empty queue. */
	if (m->m_stop || smarm__ring_len(&m->m_q) == 0)
		return m->m_stop;
	return sm_drain(m);
}

bool smarm__sm_fire(struct smarm_sm_ctx *m, int which, uint64_t gen,
		    bool pending)
{
	struct smarm__sm_ev e;

	if (which < 0 ||
	    (size_t)which >= SMARM__SM_TM_NAMED + m->m_d->n_timeouts ||
	    m->m_tm[which].tm_gen != gen || gen == 0)
		return m->m_stop; /* stale: replaced or cancelled */
	m->m_tm[which].tm_gen = 0;
	m->m_narmed--;
	if (which == SMARM__SM_TM_EVENT && pending)
		return m->m_stop; /* an event came first: it cancels this */
	e = sm_timer_ev(which);
	return smarm__sm_step(m, &e);
}

int smarm__sm_arm(struct smarm_sm_ctx *m, int which, uint64_t ns)
{
	struct smarm__sm_timer *tm = &m->m_tm[which];
	uint64_t gen = ++m->m_gen;
	smarm_timer_t t;
	int rc;

	smarm__sm_disarm(m, which);
	if (ns == 0) { /* no timer: an event in m_q (INV-3) */
		tm->tm_gen = gen;
		tm->tm_zero = true;
		tm->tm_queued = false;
		m->m_narmed++;
		return 0;
	}
	rc = m->m_h->sh_timer(m, which, ns, gen, &t);
	if (rc != 0)
		return rc;
	tm->tm_t = t;
	tm->tm_gen = gen;
	tm->tm_zero = false;
	m->m_narmed++;
	return 0;
}

int smarm__sm_disarm(struct smarm_sm_ctx *m, int which)
{
	struct smarm__sm_timer *tm = &m->m_tm[which];

	if (tm->tm_gen == 0)
		return SMARM_ENOENT;
	tm->tm_gen = 0; /* a fire already queued is stale now */
	m->m_narmed--;
	if (tm->tm_zero) /* no timer; its queued event is stale too */
		tm->tm_zero = tm->tm_queued = false;
	else
		m->m_h->sh_cancel(m, tm->tm_t);
	return 0;
}

int smarm__sm_push_next(struct smarm_sm_ctx *m, const struct smarm__sm_ev *ev)
{
	return sm_push(&m->m_next, ev);
}

/* Hand every event of r to sh_drop (SMARM_EDOWN) and free r. */
static void sm_drop_all(struct smarm_sm_ctx *m, struct smarm__ring *r)
{
	const size_t esz = sizeof(struct smarm__sm_ev);

	while (smarm__ring_len(r) > 0) {
		struct smarm__sm_ev e;
		memcpy(&e, smarm__ring_pop_front(r, esz), esz);
		m->m_h->sh_drop(m, &e, SMARM_EDOWN);
	}
	smarm__ring_fini(r);
}

void smarm__sm_fini(struct smarm_sm_ctx *m)
{
	if (m->m_magic != SMARM__SM_MAGIC)
		return;
	m->m_phase = SMARM__SM_DONE;
	for (size_t w = 0; w < SMARM__SM_TM_NAMED + m->m_d->n_timeouts; w++)
		smarm__sm_disarm(m, (int)w);
	sm_drop_all(m, &m->m_next);
	sm_drop_all(m, &m->m_q);
	sm_drop_all(m, &m->m_post);
	free(m->m_tm);
	m->m_tm = NULL;
	m->m_magic = 0;
}
