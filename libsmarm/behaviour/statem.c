/* SPDX-License-Identifier: MIT */
/*
 * statem.c - gen_statem as data: the checker the loader runs on every
 * machine table (smarm_sm_desc_t of abi/smarm/smarm_plugin.h).
 *
 * The checker. A table is accepted only if
 *   1. every field and row is well formed: at least one state, each
 *      named; initial in range; each row's state in range or
 *      SMARM_SM_ANY, its kind and tail known, POSTPONE only on CAST,
 *      CALL and INFO rows, a TO target in range, DYNAMIC with an
 *      action, and op naming an operation of the row's kind (CAST,
 *      CALL, INFO), a declared timeout (TIMEOUT) or NULL for any;
 *      kinds without a name (STATE_TIMEOUT, EVENT_TIMEOUT, SHUTDOWN,
 *      EXIT) take op NULL. Else SMARM_EPROTOCOL.
 *   2. every row can match (SMARM_EUNREACHABLE otherwise). Rows are
 *      tried in the interpreter's order: the POSTPONE rows first, in
 *      table order, then the others in table order. A row is shadowed
 *      when every event it matches - each state it names (one, or all
 *      for ANY) times each operation it names (one, or all of its kind
 *      for NULL) - is already taken by an earlier unguarded row. So a
 *      union of earlier rows shadows too, and a NULL-op row of a kind
 *      the protocol has no operation of matches nothing.
 *   3. every event that can reach a state has a row that always takes
 *      it, an unguarded one (SMARM_ENOTEXHAUSTIVE otherwise): each cast
 *      and call operation, each declared timeout name, STATE_TIMEOUT
 *      and EVENT_TIMEOUT when flags say the machine arms them. INFO,
 *      SHUTDOWN and EXIT have built-in rows after the table's
 *      (unhandled, stop, dropped), so need none.
 * One pass over the rows in that order does 2 and 3: a cell per
 * (kind, state, operation) holds the first unguarded row that takes it.
 *
 * Ownership: the checker allocates its cell map and frees it before it
 * returns; it keeps nothing. Locking: none (pure).
 * Invariants:
 *   INV-1 a cell, once set, holds the first unguarded row in matching
 *         order that takes its event: it is never overwritten.
 * See: docs/plugins.md (gen_statem).
 */
#include "statem.h"

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

static const char *const sm_kind_names[SM_NKINDS + 1] = {
	"?",	   "cast",     "call", "info", "state_timeout", "event_timeout",
	"timeout", "shutdown", "exit",
};

/* Whether rows of kind carry an operation index (CAST, CALL, INFO). */
static bool sm_kind_is_op(int kind)
{
	return kind == SMARM_SM_CAST || kind == SMARM_SM_CALL ||
	       kind == SMARM_SM_INFO;
}

static const char *sm_kind_name(int kind)
{
	return kind >= 1 && kind <= SM_NKINDS ? sm_kind_names[kind] : "?";
}

/* The checker's view of one machine. */
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

/*
 * The slot of row r's op among its kind's: 0.. ; -1 for any (op NULL);
 * -2 the op names nothing of that kind.
 */
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
	const char *kn = sm_kind_name(r->kind);

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
	if (r->tail == SMARM_SM_POSTPONE && !sm_kind_is_op(r->kind))
		return sm_fail(c, SMARM_EPROTOCOL,
			       "row %zu (state %s, %s %s): only cast, call and "
			       "info rows may postpone",
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

/*
 * Parts 2 and 3 for row i (in matching order): whether some cell it
 * matches is still free (else it is shadowed); then, if unguarded, it
 * takes the free ones (INV-1).
 */
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
			       sm_kind_name(r->kind), sm_row_op(r),
			       r->kind == SMARM_SM_TIMEOUT
				       ? "no timeout is declared"
				       : "the protocol has no operation of "
					 "that kind");
	return sm_fail(c, SMARM_EUNREACHABLE,
		       "row %zu (state %s, %s %s) is shadowed by earlier "
		       "unguarded rows (row %d first)",
		       i, sm_state_name(c, r->state), sm_kind_name(r->kind),
		       sm_row_op(r), (int)by);
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
				return sm_fail(
					c, SMARM_ENOTEXHAUSTIVE,
					"state %s has no unguarded row "
					"for %s%s%s (rows 0..%zu)",
					d->state_names[s], sm_kind_name(kind),
					on[0] ? " " : "", on,
					d->n_rows > 0 ? d->n_rows - 1 : 0);
			}
		}
	}
	return 0;
}

int smarm__sm_check_ops(const smarm_sm_desc_t *d,
			const struct smarm__sm_op *ops, size_t n_ops, char *msg,
			size_t msglen)
{
	struct sm_chk c = { 0 };
	int rc;

	if (d == NULL || (n_ops > 0 && ops == NULL))
		return SMARM_EINVAL;
	c.c_d = d;
	c.c_ops = ops;
	c.c_nops = n_ops;
	c.c_msg = msg;
	c.c_msglen = msglen;
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
	for (int kind = 1; kind <= SM_NKINDS; kind++) {
		size_t w = 1;
		if (sm_kind_is_op(kind)) {
			w = 0;
			for (size_t i = 0; i < n_ops; i++)
				w += ops[i].so_kind == kind;
		} else if (kind == SMARM_SM_TIMEOUT) {
			w = d->n_timeouts;
		}
		c.c_width[kind - 1] = w;
		/* +1: calloc of 0 may return NULL */
		c.c_cell[kind - 1] =
			malloc(((size_t)d->n_states * w + 1) * sizeof(int32_t));
		if (c.c_cell[kind - 1] == NULL) {
			rc = SMARM_ENOMEM;
			goto out_free;
		}
		memset(c.c_cell[kind - 1], 0xff,
		       ((size_t)d->n_states * w + 1) * sizeof(int32_t));
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
