/* SPDX-License-Identifier: MIT */
/*
 * trace.c - the tracer's writing half: the "smarm-trace" thread that
 * drains the workers' rings (core/trace.h) and turns their records into
 * a trace file, Chrome Trace Event JSON or Perfetto's protobuf, both
 * encoded by hand here (no JSON or protobuf library).
 *
 * Design. Every TRACE_PERIOD_MS (and when the run ends, at close, and
 * when a ring is past half full: core/trace.h)
 * the writer takes what each ring holds, merges the rings' runs (each
 * in time order) by timestamp and turns each record into events:
 *   - RUN_IN/RUN_OUT pairs of one ring become the actor's slice on that
 *     worker's track (a SWITCH record is a RUN_OUT and a RUN_IN); a worker runs
 * one actor at a time, so slices never overlap on a track. A lost record (a
 * full ring) cannot break the nesting: a RUN_IN that finds a slice open closes
 * it there, a RUN_OUT with no matching slice is dropped (INV-1).
 *   - a RUN_OUT that parked in a wait also gives the park's instant,
 *     just before the slice ends.
 *   - WAKE and the RUN_IN of one (pid, epoch) that comes back from its
 *     wait (the WOKEN half) are one flow: an arrow from the
 *     waker's slice at the wake (named "send" when the WAKE is a
 *     send's, SMARM__TRF_SEND, which also gives the send's instant) to
 *     the woken actor's slice that the park's return begins. Either
 *     half may be merged first (the
 *     rings are drained one after the other), so a half waits in a small
 *     table for the other; a flow is written only whole, both halves
 *     inside a slice (INV-2), and a half that never pairs (a timeout's
 *     wake, an overwritten entry) gives no flow. A WAKE's SEND instant
 *     waits with its half: in proto it is the flow's start (flow_ids),
 *     and the woken's slice begin its end (terminating_flow_ids) when
 *     the WAKE was merged first, else a "woken" instant; a half that
 *     goes unpaired (displaced, or left at close) still writes its
 *     SEND instant, without a flow. A send's WAKE that
 *     carries the woken's receive (SMARM__TRF_RECV: a hand-off, whose
 *     receiver records no RECV) gives the RECV instant where the
 *     woken's slice begins, when the halves pair (outside its waker's
 *     slice too: then without the arrow).
 *   - everything else is an instant on the recording worker's track.
 * JSON: an array, one event per line, each followed by ",\n", so a file
 * cut after any write is a prefix that Perfetto reads (it accepts an
 * array without its closing bracket); close appends the last event
 * (with the drop count) and the "]". ts and dur are microseconds with
 * three decimals (ns kept). Flows are v1 flow events ("s", and "f" with
 * "bp":"e") binding to the enclosing slices.
 * Proto: a Trace is a sequence of its field 1 (TracePacket), so a file
 * of whole packets is a valid trace; each packet is encoded whole in
 * the output buffer (a track event straight into it, pw_begin), and
 * the buffer goes to the file only between packets (INV-3). Track descriptors
 * first (one process, one thread track per worker and one for other threads),
 * then TrackEvents on one trusted sequence. Field numbers from Perfetto's
 * trace_packet.proto, track_event.proto, track_descriptor.proto,
 * process_descriptor.proto, thread_descriptor.proto and
 * debug_annotation.proto.
 *
 * Ownership: the obs subsystem's per-node state holds the writer
 * (smarm__obs_trace_open .. _close); the writer thread alone touches
 * its tables and buffer between those.
 * Locking: none. The requests to the thread are tw_stop (atomic) and
 * the tracer's kick word (core/trace.h smarm__trace_kick, which a
 * producer past half a ring also sets); nothing else is shared but the
 * rings (their own protocol).
 * Invariants: INV-1 at most one slice is open per track, and an event
 * is written only for a slice that was opened. INV-2 every flow written
 * has both ends. INV-3 the file holds whole events (JSON lines, proto
 * packets) after every write(2).
 * See: docs/observability.md (Tracing).
 */
#include "obs.h"

#include "../core/log.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TRACE_PERIOD_MS 20
#define TRACE_TAKE 4096	  /* records taken from a ring per pass */
#define TRACE_FLUSH 65536 /* buffer bytes that trigger a write */
#define FLOW_SLOTS 4096	  /* pending flow halves (a power of two) */
#define NAME_SLOTS 1024	  /* actor names (a power of two) */
#define PROC_UUID 1	  /* proto: the process track */
#define TRACK_UUID0 16	  /* proto: worker i's track is TRACK_UUID0 + i */
#define SEQ_ID 1	  /* proto: the writer's packet sequence */

/* One half of a flow waiting for the other (key 0: empty). */
struct tw_flow {
	uint64_t tf_key;
	uint64_t tf_ns;
	uint32_t tf_track;
	bool tf_woken; /* this half is the WOKEN */
	bool tf_send;  /* the WAKE was its waker's send's */
	bool tf_flow;  /* the WAKE was inside its waker's slice: an arrow */
	bool tf_recv;  /* the WAKE carries the woken's RECV (SMARM__TRF_RECV) */
	bool tf_inst;  /* WAKE: its SEND instant is still to be written */
	uint64_t tf_pid;   /* WAKE: the woken pid */
	uint64_t tf_chan;  /* WAKE, tf_send: the channel */
	uint64_t tf_waker; /* WAKE, tf_inst: the sender pid */
};

struct tw_open {
	bool to_open;
	uint64_t to_pid;
	uint64_t to_ns;
	size_t to_at, to_end; /* drain_pass: the ring's run in the batch */
};

/* An actor's name: a LABEL's text, or "actor <index>" made once. */
struct tw_name {
	uint64_t tn_pid;
	uint8_t tn_len;
	bool tn_label; /* a LABEL's: not replaced by another pid's made name */
	char tn_text[SMARM__TRACE_NAME_MAX];
};

struct smarm__obs_trace {
	struct smarm_node *tw_node;
	struct smarm__trace *tw_t;
	int tw_fd;
	int tw_fmt; /* SMARM_TRACE_JSON or _PERFETTO */
	int tw_serial;
	pthread_t tw_thr;
	bool tw_thr_on;
	atomic_bool tw_stop; /* close asked the thread to finish */
	/* the thread's own */
	struct smarm__trace_rec *tw_batch; /* the rings' runs, one by one */
	size_t tw_batch_cap;
	struct tw_open *tw_open; /* per ring */
	struct tw_flow tw_flows[FLOW_SLOTS];
	struct tw_name tw_names[NAME_SLOTS];
	uint64_t tw_ns_q40;  /* ns per 2^40 cycles (rec_ns: no division) */
	uint64_t tw_flow_id; /* the last flow id handed out */
	uint64_t tw_last_ns;
	char *tw_buf;
	size_t tw_len, tw_cap;
	bool tw_failed; /* a write failed: nothing more is written */
};

/* ------------------------------------------------------------ output */

static void out_reserve(struct smarm__obs_trace *tw, size_t more)
{
	if (tw->tw_len + more <= tw->tw_cap)
		return;
	size_t cap = tw->tw_cap ? tw->tw_cap : 1 << 17;
	while (cap < tw->tw_len + more)
		cap *= 2;
	char *b = realloc(tw->tw_buf, cap);
	if (b == NULL) {
		tw->tw_failed = true; /* no memory: stop tracing, keep file */
		return;
	}
	tw->tw_buf = b;
	tw->tw_cap = cap;
}

static void out_bytes(struct smarm__obs_trace *tw, const void *p, size_t n)
{
	out_reserve(tw, n);
	if (tw->tw_failed)
		return;
	memcpy(tw->tw_buf + tw->tw_len, p, n);
	tw->tw_len += n;
}

/* Write the buffer out: whole events only (INV-3). */
static void out_flush(struct smarm__obs_trace *tw)
{
	size_t off = 0;
	while (!tw->tw_failed && off < tw->tw_len) {
		ssize_t k =
			write(tw->tw_fd, tw->tw_buf + off, tw->tw_len - off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			tw->tw_failed = true;
			break;
		}
		off += (size_t)k;
	}
	tw->tw_len = 0;
}

/* Called after each whole event. */
static void out_event_done(struct smarm__obs_trace *tw)
{
	if (tw->tw_len >= TRACE_FLUSH)
		out_flush(tw);
}

/* ------------------------------------------------------------- names */

static const char *kind_text(int kind)
{
	switch (kind) {
#define XX(name, value, text)                                                  \
	case SMARM__TR_##name:                                                 \
		return text;
		SMARM__TRACE_KINDS(XX)
#undef XX
	}
	return "?";
}

static const char *intent_text(uint32_t intent)
{
	switch (intent) {
	case SMARM__INTENT_YIELD:
		return "yield";
	case SMARM__INTENT_PARK:
		return "park";
	case SMARM__INTENT_HIBERNATE:
		return "hibernate";
	case SMARM__INTENT_DONE:
		return "exit";
	case SMARM__INTENT_PREEMPT:
	case SMARM__INTENT_MOVE:
		return "preempt async";
	case SMARM__INTENT_SLICE:
		return "preempt safe point";
	}
	return "?";
}

/* A park's instant name: "park " and what it waits on (a SMARM__WON_*),
 * which is also its "on" argument (the text after PARK_PREFIX). */
#define PARK_PREFIX (sizeof "park " - 1)
static const char *park_name(uint32_t won)
{
	switch (won) {
	case SMARM__WON_CALL:
		return "park call";
	case SMARM__WON_JOIN:
		return "park join";
	case SMARM__WON_MUTEX:
		return "park mutex";
	case SMARM__WON_IO:
		return "park io";
	case SMARM__WON_SLEEP:
		return "park sleep";
	}
	return "park message";
}

static struct tw_name *name_slot(struct smarm__obs_trace *tw, uint64_t pid)
{
	return &tw->tw_names[(pid * 0x9E3779B97F4A7C15ull) >> 54 &
			     (NAME_SLOTS - 1)];
}

/* An actor's slice name: its label, else "actor <index>". */
/* buf (cap > 0) gets a then b (NULL: none), cut to fit, NUL-terminated:
 * the names the writer makes per event, without snprintf. Not inlined:
 * inlined with a short literal for a, GCC's -O3 takes strnlen's bound
 * for a read past the literal (-Wstringop-overread). */
static __attribute__((noinline)) void name_cat(char *buf, size_t cap,
					       const char *a, const char *b)
{
	size_t n = strnlen(a, cap - 1), m = 0;
	memcpy(buf, a, n);
	if (b != NULL) {
		m = strnlen(b, cap - 1 - n);
		memcpy(buf + n, b, m);
	}
	buf[n + m] = '\0';
}

/* pid's slice name and its length: its label, else "actor <index>",
 * kept in pid's slot unless another pid's label holds it (then made in
 * tmp, of SMARM__TRACE_NAME_MAX bytes). */
static const char *actor_name(struct smarm__obs_trace *tw, uint64_t pid,
			      char *tmp, size_t *len)
{
	struct tw_name *nm = name_slot(tw, pid);
	char num[24];
	uint32_t v = (uint32_t)(pid & 0xffffffu); /* slot.h: the index bits */
	size_t k = sizeof num;
	char *out = tmp;
	if (nm->tn_pid == pid && nm->tn_text[0] != '\0') {
		*len = nm->tn_len;
		return nm->tn_text;
	}
	if (!nm->tn_label || nm->tn_text[0] == '\0') {
		nm->tn_pid = pid;
		nm->tn_label = false;
		out = nm->tn_text;
	}
	num[--k] = '\0';
	do {
		num[--k] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	name_cat(out, SMARM__TRACE_NAME_MAX, "actor ", num + k);
	*len = strlen(out);
	if (out == nm->tn_text)
		nm->tn_len = (uint8_t)*len;
	return out;
}

/* Escape s into a JSON string body (names are short). */
static void json_str(struct smarm__obs_trace *tw, const char *s)
{
	char esc[8];
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)c;
			out_bytes(tw, esc, 2);
		} else if (c < 0x20) {
			snprintf(esc, sizeof esc, "\\u%04x", c);
			out_bytes(tw, esc, 6);
		} else {
			out_bytes(tw, &c, 1);
		}
	}
}

/* ------------------------------------------------------ JSON encoder */

static void json_fmt(struct smarm__obs_trace *tw, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void json_fmt(struct smarm__obs_trace *tw, const char *fmt, ...)
{
	va_list ap;
	int k;
	out_reserve(tw, 512);
	if (tw->tw_failed)
		return;
	va_start(ap, fmt);
	k = vsnprintf(tw->tw_buf + tw->tw_len, tw->tw_cap - tw->tw_len, fmt,
		      ap);
	va_end(ap);
	if (k > 0 && (size_t)k < tw->tw_cap - tw->tw_len)
		tw->tw_len += (size_t)k;
}

#define US(ns) (ns) / 1000, (ns) % 1000

static uint32_t json_tid(uint32_t track)
{
	return track + 1;
}

static void json_meta(struct smarm__obs_trace *tw)
{
	uint32_t n = tw->tw_t->tc_n;
	json_fmt(tw,
		 "[\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,"
		 "\"tid\":0,\"args\":{\"name\":\"smarm node %d\"}},\n",
		 tw->tw_serial, tw->tw_serial);
	for (uint32_t i = 0; i < n; i++) {
		char name[32];
		if (i + 1 < n)
			snprintf(name, sizeof name, "smarm-w%u", i);
		else
			snprintf(name, sizeof name, "other threads");
		json_fmt(tw,
			 "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,"
			 "\"tid\":%u,\"args\":{\"name\":\"%s\"}},\n",
			 tw->tw_serial, json_tid(i), name);
	}
	out_event_done(tw);
}

static void json_slice(struct smarm__obs_trace *tw, uint32_t track,
		       uint64_t pid, uint64_t t0, uint64_t t1, const char *end)
{
	char tmp[SMARM__TRACE_NAME_MAX];
	size_t len;
	const char *name = actor_name(tw, pid, tmp, &len);
	json_fmt(tw, "{\"ph\":\"X\",\"cat\":\"actor\",\"name\":\"");
	json_str(tw, name);
	json_fmt(tw,
		 "\",\"pid\":%d,\"tid\":%u,\"ts\":%" PRIu64 ".%03" PRIu64
		 ",\"dur\":%" PRIu64 ".%03" PRIu64
		 ",\"args\":{\"pid\":\"0x%" PRIx64 "\",\"end\":\"%s\"}},\n",
		 tw->tw_serial, json_tid(track), US(t0), US(t1 - t0), pid, end);
	out_event_done(tw);
}

static void json_instant(struct smarm__obs_trace *tw, uint32_t track,
			 uint64_t ns, const char *name, const char *args)
{
	json_fmt(tw, "{\"ph\":\"i\",\"s\":\"t\",\"cat\":\"smarm\",\"name\":\"");
	json_str(tw, name);
	json_fmt(tw,
		 "\",\"pid\":%d,\"tid\":%u,\"ts\":%" PRIu64 ".%03" PRIu64
		 ",\"args\":{%s}},\n",
		 tw->tw_serial, json_tid(track), US(ns), args);
	out_event_done(tw);
}

static void json_flow(struct smarm__obs_trace *tw, uint64_t id,
		      const char *name, uint32_t t_out, uint64_t ns_out,
		      uint32_t t_in, uint64_t ns_in)
{
	json_fmt(
		tw,
		"{\"ph\":\"s\",\"cat\":\"flow\",\"name\":\"%s\",\"id\":%" PRIu64
		",\"pid\":%d,\"tid\":%u,\"ts\":%" PRIu64 ".%03" PRIu64 "},\n",
		name, id, tw->tw_serial, json_tid(t_out), US(ns_out));
	json_fmt(tw,
		 "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"flow\",\"name\":\"%s\","
		 "\"id\":%" PRIu64 ",\"pid\":%d,\"tid\":%u,\"ts\":%" PRIu64
		 ".%03" PRIu64 "},\n",
		 name, id, tw->tw_serial, json_tid(t_in), US(ns_in));
	out_event_done(tw);
}

static void json_end(struct smarm__obs_trace *tw)
{
	json_fmt(tw,
		 "{\"ph\":\"i\",\"s\":\"g\",\"cat\":\"smarm\",\"name\":"
		 "\"trace end\",\"pid\":%d,\"tid\":0,\"ts\":%" PRIu64
		 ".%03" PRIu64 ",\"args\":{\"dropped\":%" PRIu64 "}}\n]\n",
		 tw->tw_serial, US(tw->tw_last_ns),
		 smarm__trace_dropped(tw->tw_t));
}

/* ----------------------------------------------------- proto encoder */

/* A message being built: a small buffer (every message here is small). */
struct pb {
	uint8_t b[512];
	size_t n;
};

static void pb_varint(struct pb *m, uint64_t v)
{
	while (v >= 0x80 && m->n < sizeof m->b) {
		m->b[m->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	if (m->n < sizeof m->b)
		m->b[m->n++] = (uint8_t)v;
}

static void pb_tag(struct pb *m, uint32_t field, uint32_t wire)
{
	pb_varint(m, (uint64_t)field << 3 | wire);
}

static void pb_uint(struct pb *m, uint32_t field, uint64_t v)
{
	pb_tag(m, field, 0);
	pb_varint(m, v);
}

static void pb_bytes(struct pb *m, uint32_t field, const void *p, size_t len)
{
	pb_tag(m, field, 2);
	pb_varint(m, len);
	if (m->n + len > sizeof m->b)
		len = sizeof m->b - m->n; /* cannot happen: names are short */
	memcpy(m->b + m->n, p, len);
	m->n += len;
}

static void pb_str(struct pb *m, uint32_t field, const char *s)
{
	pb_bytes(m, field, s, strlen(s));
}

static void pb_msg(struct pb *m, uint32_t field, const struct pb *sub)
{
	pb_bytes(m, field, sub->b, sub->n);
}

/* Field numbers (Perfetto's protos). */
enum {
	F_TRACE_PACKET = 1,    /* Trace.packet */
	F_TP_TIMESTAMP = 8,    /* TracePacket.timestamp */
	F_TP_SEQ_ID = 10,      /* .trusted_packet_sequence_id */
	F_TP_TRACK_EVENT = 11, /* .track_event */
	F_TP_SEQ_FLAGS = 13,   /* .sequence_flags */
	F_TP_TRACK_DESC = 60,  /* .track_descriptor */
	F_TD_UUID = 1,	       /* TrackDescriptor.uuid */
	F_TD_NAME = 2,	       /* .name */
	F_TD_PROCESS = 3,      /* .process */
	F_TD_THREAD = 4,       /* .thread */
	F_TD_PARENT = 5,       /* .parent_uuid */
	F_PD_PID = 1,	       /* ProcessDescriptor.pid */
	F_PD_NAME = 6,	       /* .process_name */
	F_THD_PID = 1,	       /* ThreadDescriptor.pid */
	F_THD_TID = 2,	       /* .tid */
	F_THD_NAME = 5,	       /* .thread_name */
	F_TE_DEBUG = 4,	       /* TrackEvent.debug_annotations */
	F_TE_TYPE = 9,	       /* .type */
	F_TE_TRACK = 11,       /* .track_uuid */
	F_TE_CATEGORIES = 22,  /* .categories */
	F_TE_NAME = 23,	       /* .name */
	F_TE_FLOW = 47,	       /* .flow_ids (fixed64) */
	F_TE_FLOW_END = 48,    /* .terminating_flow_ids (fixed64) */
	F_DA_UINT = 3,	       /* DebugAnnotation.uint_value */
	F_DA_STRING = 6,       /* .string_value */
	F_DA_NAME = 10,	       /* .name */
	TE_SLICE_BEGIN = 1,
	TE_SLICE_END = 2,
	TE_INSTANT = 3,
	SEQ_CLEARED = 1, /* SEQ_INCREMENTAL_STATE_CLEARED */
};

/* Append one TracePacket holding payload as field f (INV-3). */
static void pb_packet(struct smarm__obs_trace *tw, uint64_t ns, uint32_t f,
		      const struct pb *payload, uint32_t flags)
{
	struct pb two[2]; /* the writer's own stack: no allocation */
	struct pb *pk = &two[0], *tr = &two[1];
	pk->n = 0;
	tr->n = 0;
	if (ns != UINT64_MAX)
		pb_uint(pk, F_TP_TIMESTAMP, ns);
	pb_uint(pk, F_TP_SEQ_ID, SEQ_ID);
	if (flags != 0)
		pb_uint(pk, F_TP_SEQ_FLAGS, flags);
	pb_msg(pk, f, payload);
	pb_msg(tr, F_TRACE_PACKET, pk);
	out_bytes(tw, tr->b, tr->n);
	out_event_done(tw);
}

/*
 * Track events are encoded straight into the output buffer, not built
 * in a struct pb and copied. A nested message's length is not known
 * when it opens, so two bytes are kept for it and patched at its close:
 * a varint of two bytes even when one would do, which protobuf decoders
 * accept (Perfetto's own protozero keeps four the same way). Every
 * message here is far below 2^14 bytes, the most two bytes hold.
 */
#define PW_MAX 1024 /* bytes one track event packet may take */
/* The encoders inline, so that a literal name's memcpy is a store. */
#define PW_INLINE inline __attribute__((always_inline))

static PW_INLINE uint8_t *pw_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static PW_INLINE uint8_t *pw_uint(uint8_t *p, uint32_t field, uint64_t v)
{
	return pw_varint(pw_varint(p, (uint64_t)field << 3), v);
}

static PW_INLINE uint8_t *pw_bytes(uint8_t *p, uint32_t field, const void *s,
				   size_t len)
{
	p = pw_varint(pw_varint(p, (uint64_t)field << 3 | 2), len);
	memcpy(p, s, len);
	return p + len;
}

static uint8_t *pw_fixed64(uint8_t *p, uint32_t field, uint64_t v)
{
	p = pw_varint(p, (uint64_t)field << 3 | 1);
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

/* Open a nested message: its tag and two bytes for its length. */
static PW_INLINE uint8_t *pw_open(uint8_t *p, uint32_t field, uint8_t **len_at)
{
	p = pw_varint(p, (uint64_t)field << 3 | 2);
	*len_at = p;
	return p + 2;
}

static PW_INLINE void pw_close(uint8_t *len_at, const uint8_t *end)
{
	size_t len = (size_t)(end - (len_at + 2));
	SMARM_ASSERT(len < (1u << 14));
	len_at[0] = (uint8_t)(len | 0x80);
	len_at[1] = (uint8_t)(len >> 7);
}

/* A debug annotation: its name and an unsigned or a string value. */
static PW_INLINE uint8_t *pw_annot_u(uint8_t *p, const char *name, size_t nlen,
				     uint64_t v)
{
	uint8_t *l;
	p = pw_open(p, F_TE_DEBUG, &l);
	p = pw_bytes(p, F_DA_NAME, name, nlen);
	p = pw_uint(p, F_DA_UINT, v);
	pw_close(l, p);
	return p;
}

static uint8_t *pw_annot_s(uint8_t *p, const char *name, size_t nlen,
			   const char *v)
{
	uint8_t *l;
	p = pw_open(p, F_TE_DEBUG, &l);
	p = pw_bytes(p, F_DA_NAME, name, nlen);
	p = pw_bytes(p, F_DA_STRING, v, strlen(v));
	pw_close(l, p);
	return p;
}

/* A track event packet being written (INV-3: whole, or nothing). */
struct pw_pkt {
	uint8_t *p;	/* the next byte */
	uint8_t *l_pkt; /* Trace.packet's length */
	uint8_t *l_ev;	/* TracePacket.track_event's length */
};

/* Begin a TrackEvent of type on track at ns (cat, name of their
 * lengths: NULL none, each < 2^7 bytes);
 * false: no memory, nothing more is written. */
static bool pw_begin(struct smarm__obs_trace *tw, struct pw_pkt *k, uint64_t ns,
		     int type, uint32_t track, const char *cat, size_t clen,
		     const char *name, size_t nlen)
{
	uint8_t *p;
	out_reserve(tw, PW_MAX);
	if (tw->tw_failed)
		return false;
	p = (uint8_t *)tw->tw_buf + tw->tw_len;
	p = pw_open(p, F_TRACE_PACKET, &k->l_pkt);
	p = pw_uint(p, F_TP_TIMESTAMP, ns);
	p = pw_uint(p, F_TP_SEQ_ID, SEQ_ID);
	p = pw_open(p, F_TP_TRACK_EVENT, &k->l_ev);
	p = pw_uint(p, F_TE_TYPE, (uint64_t)type);
	p = pw_uint(p, F_TE_TRACK, TRACK_UUID0 + track);
	if (cat != NULL)
		p = pw_bytes(p, F_TE_CATEGORIES, cat, clen);
	if (name != NULL)
		p = pw_bytes(p, F_TE_NAME, name, nlen);
	k->p = p;
	return true;
}

static void pw_end(struct smarm__obs_trace *tw, struct pw_pkt *k)
{
	pw_close(k->l_ev, k->p);
	pw_close(k->l_pkt, k->p);
	SMARM_ASSERT(k->p - ((uint8_t *)tw->tw_buf + tw->tw_len) <= PW_MAX);
	tw->tw_len = (size_t)((char *)k->p - tw->tw_buf);
	out_event_done(tw);
}

#define PW_LIT(s) (s), sizeof(s) - 1 /* a literal and its length */

static void proto_meta(struct smarm__obs_trace *tw)
{
	uint32_t n = tw->tw_t->tc_n;
	struct pb td = { .n = 0 }, sub = { .n = 0 };
	char name[32];
	snprintf(name, sizeof name, "smarm node %d", tw->tw_serial);
	pb_uint(&sub, F_PD_PID, (uint64_t)getpid());
	pb_str(&sub, F_PD_NAME, name);
	pb_uint(&td, F_TD_UUID, PROC_UUID);
	pb_msg(&td, F_TD_PROCESS, &sub);
	pb_packet(tw, UINT64_MAX, F_TP_TRACK_DESC, &td, SEQ_CLEARED);
	for (uint32_t i = 0; i < n; i++) {
		if (i + 1 < n)
			snprintf(name, sizeof name, "smarm-w%u", i);
		else
			snprintf(name, sizeof name, "other threads");
		td.n = sub.n = 0;
		pb_uint(&sub, F_THD_PID, (uint64_t)getpid());
		pb_uint(&sub, F_THD_TID, (uint64_t)getpid() * 1000 + i + 1);
		pb_str(&sub, F_THD_NAME, name);
		pb_uint(&td, F_TD_UUID, TRACK_UUID0 + i);
		pb_uint(&td, F_TD_PARENT, PROC_UUID);
		pb_str(&td, F_TD_NAME, name);
		pb_msg(&td, F_TD_THREAD, &sub);
		pb_packet(tw, UINT64_MAX, F_TP_TRACK_DESC, &td, 0);
	}
}

/* ----------------------------------------------------- the event model */

/* A record's time in ns since the trace began. */
static uint64_t rec_ns(const struct smarm__obs_trace *tw,
		       const struct smarm__trace_rec *r)
{
	return r->tr_ts > tw->tw_t->tc_t0
		       ? (uint64_t)((unsigned __int128)(r->tr_ts -
							tw->tw_t->tc_t0) *
					    tw->tw_ns_q40 >>
				    40)
		       : 0;
}

/* pid's slice begins on track at ns; proto, flow != 0: the slice ends
 * that flow (its terminating_flow_ids: no instant of its own). */
static void slice_begin(struct smarm__obs_trace *tw, uint32_t track,
			uint64_t pid, uint64_t ns, uint64_t flow)
{
	struct tw_open *o = &tw->tw_open[track];
	o->to_open = true;
	o->to_pid = pid;
	o->to_ns = ns;
	if (tw->tw_fmt == SMARM_TRACE_PERFETTO) {
		struct pw_pkt k;
		char tmp[SMARM__TRACE_NAME_MAX];
		size_t len;
		const char *name = actor_name(tw, pid, tmp, &len);
		if (!pw_begin(tw, &k, ns, TE_SLICE_BEGIN, track,
			      PW_LIT("actor"), name, len))
			return;
		k.p = pw_annot_u(k.p, PW_LIT("pid"), pid);
		if (flow != 0)
			k.p = pw_fixed64(k.p, F_TE_FLOW_END, flow);
		pw_end(tw, &k);
	}
}

static void slice_end(struct smarm__obs_trace *tw, uint32_t track, uint64_t ns,
		      const char *why)
{
	struct tw_open *o = &tw->tw_open[track];
	if (!o->to_open)
		return;
	o->to_open = false;
	if (tw->tw_fmt == SMARM_TRACE_JSON) {
		json_slice(tw, track, o->to_pid, o->to_ns, ns, why);
	} else {
		struct pw_pkt k;
		if (!pw_begin(tw, &k, ns, TE_SLICE_END, track, NULL, 0, NULL,
			      0))
			return;
		k.p = pw_annot_s(k.p, PW_LIT("end"), why);
		pw_end(tw, &k);
	}
}

/*
 * The arguments an instant shows, per kind: up to two of its record's
 * a, b, c under their names (an id or pid in hex in JSON, a count in
 * decimal; a count of one and a target of none are left out). The rest
 * of a record is in the instant's name and track or the slice around it.
 */
enum { ARG_NONE, ARG_A, ARG_B, ARG_C };
struct tw_arg {
	char ta_name[10];
	uint8_t ta_len;
	uint8_t ta_which; /* ARG_* */
	bool ta_count;	  /* a count: decimal, left out when 1 */
	bool ta_opt;	  /* left out when 0 */
};
#define ARG(name, which, count, opt)                                           \
	{                                                                      \
		name, sizeof(name) - 1, which, count, opt                      \
	}
static const struct tw_arg kind_args[SMARM__TR_KINDS][2] = {
	[SMARM__TR_SPAWN] = { ARG("child", ARG_B, false, false) },
	[SMARM__TR_EXIT] = { ARG("pid", ARG_A, false, false),
			     ARG("reason", ARG_B, true, false) },
	[SMARM__TR_PARK] = { ARG("target", ARG_B, false, true) },
	[SMARM__TR_SEND] = { ARG("chan", ARG_B, false, false),
			     ARG("n", ARG_C, true, false) },
	[SMARM__TR_RECV] = { ARG("chan", ARG_B, false, false),
			     ARG("n", ARG_C, true, false) },
	[SMARM__TR_TIMER] = { ARG("pid", ARG_A, false, false) },
	[SMARM__TR_CALL] = { ARG("server", ARG_B, false, false) },
	[SMARM__TR_CAST] = { ARG("server", ARG_B, false, false) },
	[SMARM__TR_REPLY] = { ARG("client", ARG_B, false, false) },
	[SMARM__TR_RESTART] = { ARG("child pid", ARG_B, false, false),
				ARG("restarts", ARG_C, true, false) },
};
#undef ARG

/* An argument's value, or false if it is not shown. */
static bool arg_value(const struct tw_arg *g, const struct smarm__trace_rec *r,
		      uint64_t *v)
{
	switch (g->ta_which) {
	case ARG_A:
		*v = r->tr_a;
		break;
	case ARG_B:
		*v = r->tr_b;
		break;
	case ARG_C:
		*v = r->tr_c;
		break;
	default:
		return false;
	}
	return !(g->ta_count && *v == 1) && !(g->ta_opt && *v == 0);
}

/* An instant of r on track at ns; proto, flow != 0: it starts that
 * flow (its flow_ids), so no instant of its own is needed for it. */
static void instant(struct smarm__obs_trace *tw, uint32_t track, uint64_t ns,
		    const struct smarm__trace_rec *r, uint64_t flow)
{
	char buf[64], args[192];
	const char *name = kind_text(r->tr_kind); /* or buf */
	const char *s = NULL;			  /* a string argument */
	const char *sname = "";
	switch (r->tr_kind) {
	case SMARM__TR_EXIT:
		s = smarm__log_how((int)r->tr_c); /* as reports say it */
		sname = "outcome";
		name_cat(buf, sizeof buf, "exit ", s);
		name = buf;
		break;
	case SMARM__TR_PARK:
		name = park_name(r->tr_c);
		s = name + PARK_PREFIX;
		sname = "on";
		break;
	case SMARM__TR_TIMER:
		s = r->tr_c ? "timed send" : "timeout";
		sname = "kind";
		break;
	default:
		if (r->tr_flags & SMARM__TRF_NAME) {
			size_t n;
			name_cat(buf, sizeof buf, name, " ");
			n = strlen(buf);
			name_cat(buf + n, sizeof buf - n, r->tr_name, NULL);
			name = buf;
		}
		break;
	}
	const struct tw_arg *ga =
		kind_args[r->tr_kind < SMARM__TR_KINDS ? r->tr_kind : 0];
	uint64_t v;
	if (tw->tw_fmt == SMARM_TRACE_JSON) {
		size_t k = 0;
		args[0] = '\0';
		for (int i = 0; i < 2; i++) {
			if (!arg_value(&ga[i], r, &v))
				continue;
			k += (size_t)snprintf(
				args + k, sizeof args - k,
				ga[i].ta_count ? "%s\"%s\":%" PRIu64
					       : "%s\"%s\":\"0x%" PRIx64 "\"",
				k ? "," : "", ga[i].ta_name, v);
		}
		/* k < sizeof args: two short arguments fit (no cut) */
		if (s != NULL)
			snprintf(args + k, sizeof args - k, "%s\"%s\":\"%s\"",
				 k ? "," : "", sname, s);
		json_instant(tw, track, ns, name, args);
	} else {
		struct pw_pkt k;
		if (!pw_begin(tw, &k, ns, TE_INSTANT, track, PW_LIT("smarm"),
			      name, strlen(name)))
			return;
		for (int i = 0; i < 2; i++)
			if (arg_value(&ga[i], r, &v))
				k.p = pw_annot_u(k.p, ga[i].ta_name,
						 ga[i].ta_len, v);
		if (s != NULL)
			k.p = pw_annot_s(k.p, sname, strlen(sname), s);
		if (flow != 0)
			k.p = pw_fixed64(k.p, F_TE_FLOW, flow);
		pw_end(tw, &k);
	}
}

/* A WAKE half's SEND instant, held until the half pairs or goes (the
 * flow's start, when there is one: flow). */
static void send_instant(struct smarm__obs_trace *tw,
			 const struct tw_flow *wake, uint64_t flow)
{
	struct smarm__trace_rec sd = {
		.tr_a = wake->tf_waker,
		.tr_b = wake->tf_chan,
		.tr_c = 1,
		.tr_kind = SMARM__TR_SEND,
	};
	instant(tw, wake->tf_track, wake->tf_ns, &sd, flow);
}

/*
 * Write the flow of a WAKE half and a WOKEN half (INV-2), the WAKE's
 * SEND instant, and the woken's RECV that a send's WAKE carries, where
 * its slice begins. in: the flow id that the woken's slice begin has
 * already ended (proto, the WAKE merged first: run_in), else 0. In
 * proto the flow starts on the SEND instant (a "wake" instant for a
 * wake that is no send's) and ends on the slice begin, or on a "woken"
 * instant when the slice began before its WAKE was merged.
 */
static void flow_write(struct smarm__obs_trace *tw, const struct tw_flow *wake,
		       uint32_t t_in, uint64_t ns_in, uint64_t in)
{
	uint64_t id = in;
	if (wake->tf_recv) {
		struct smarm__trace_rec rv = {
			.tr_a = wake->tf_pid,
			.tr_b = wake->tf_chan,
			.tr_c = 1,
			.tr_kind = SMARM__TR_RECV,
		};
		instant(tw, t_in, ns_in, &rv, 0);
	}
	if (!wake->tf_flow) {
		if (wake->tf_inst)
			send_instant(tw, wake, 0);
		return;
	}
	if (id == 0)
		id = ++tw->tw_flow_id;
	if (tw->tw_fmt == SMARM_TRACE_JSON) {
		if (wake->tf_inst)
			send_instant(tw, wake, 0);
		json_flow(tw, id, wake->tf_send ? "send" : "wake",
			  wake->tf_track, wake->tf_ns, t_in, ns_in);
		return;
	}
	if (wake->tf_inst) {
		send_instant(tw, wake, id);
	} else {
		struct pw_pkt k;
		if (!pw_begin(tw, &k, wake->tf_ns, TE_INSTANT, wake->tf_track,
			      PW_LIT("flow"), PW_LIT("wake")))
			return;
		k.p = pw_fixed64(k.p, F_TE_FLOW, id);
		pw_end(tw, &k);
	}
	if (in == 0) {
		struct pw_pkt k;
		if (!pw_begin(tw, &k, ns_in, TE_INSTANT, t_in, PW_LIT("flow"),
			      PW_LIT("woken")))
			return;
		k.p = pw_fixed64(k.p, F_TE_FLOW_END, id);
		pw_end(tw, &k);
	}
}

static uint64_t flow_key(uint64_t pid, uint32_t epoch)
{
	uint64_t k =
		(pid ^ ((uint64_t)epoch << 40) ^ epoch) * 0x9E3779B97F4A7C15ull;
	return k != 0 ? k : 1;
}

static struct tw_flow *flow_slot(struct smarm__obs_trace *tw, uint64_t key)
{
	return &tw->tw_flows[key >> 52 & (FLOW_SLOTS - 1)];
}

/* An unpaired half goes: no flow, but a WAKE's SEND instant is kept. */
static void flow_drop(struct smarm__obs_trace *tw, struct tw_flow *f)
{
	if (f->tf_key != 0 && !f->tf_woken && f->tf_inst)
		send_instant(tw, f, 0);
	f->tf_key = 0;
}

/* One half of a flow: pair it, or keep it for its other half. */
static void flow_half(struct smarm__obs_trace *tw, uint64_t key,
		      const struct tw_flow *half)
{
	struct tw_flow *f = flow_slot(tw, key);
	if (f->tf_key == key && f->tf_woken != half->tf_woken) {
		if (half->tf_woken)
			flow_write(tw, f, half->tf_track, half->tf_ns, 0);
		else
			flow_write(tw, half, f->tf_track, f->tf_ns, 0);
		f->tf_key = 0;
		return;
	}
	flow_drop(tw, f); /* an unpaired older half in the way */
	*f = *half;
	f->tf_key = key;
}

/* pid's slice begins at ns; woken: back from the wait of that epoch. */
static void run_in(struct smarm__obs_trace *tw, uint32_t track, uint64_t ns,
		   uint64_t pid, bool woken, uint32_t epoch)
{
	uint64_t key = woken ? flow_key(pid, epoch) : 0;
	struct tw_flow *f = flow_slot(tw, key);
	slice_end(tw, track, ns, "lost"); /* INV-1 */
	if (woken && f->tf_key == key && !f->tf_woken) {
		/* Its WAKE came first: in proto the slice ends the flow. */
		uint64_t id = 0;
		if (f->tf_flow && tw->tw_fmt == SMARM_TRACE_PERFETTO)
			id = ++tw->tw_flow_id;
		slice_begin(tw, track, pid, ns, id);
		flow_write(tw, f, track, ns, id);
		f->tf_key = 0;
		return;
	}
	slice_begin(tw, track, pid, ns, 0);
	if (woken) { /* its flow's end */
		struct tw_flow h = { .tf_ns = ns,
				     .tf_track = track,
				     .tf_woken = true };
		flow_half(tw, key, &h);
	}
}

/* pid's slice ends at ns for intent; if it parked, on won (a
 * SMARM__WON_*) with target, the park's instant first. */
static void run_out(struct smarm__obs_trace *tw, uint32_t track, uint64_t ns,
		    uint64_t pid, uint64_t target, bool parked, uint32_t won,
		    uint32_t intent)
{
	const struct tw_open *o = &tw->tw_open[track];
	if (!o->to_open || o->to_pid != pid)
		return;
	if (parked) {
		struct smarm__trace_rec pk = {
			.tr_a = pid,
			.tr_b = target,
			.tr_c = won,
			.tr_kind = SMARM__TR_PARK,
		};
		instant(tw, track, ns, &pk, 0);
	}
	slice_end(tw, track, ns, intent_text(intent));
}

static void rec_handle(struct smarm__obs_trace *tw, uint32_t track,
		       const struct smarm__trace_rec *r)
{
	struct tw_open *o = &tw->tw_open[track];
	uint64_t ns = rec_ns(tw, r);
	if (ns > tw->tw_last_ns)
		tw->tw_last_ns = ns;
	switch (r->tr_kind) {
	case SMARM__TR_RUN_IN:
		run_in(tw, track, ns, r->tr_a, r->tr_b != 0, r->tr_c);
		return;
	case SMARM__TR_RUN_OUT:
		run_out(tw, track, ns, r->tr_a, r->tr_b,
			r->tr_c & SMARM__TRACE_PARKED, r->tr_c >> 8 & 0xff,
			r->tr_c & 0xff);
		return;
	case SMARM__TR_SWITCH: {
		uint32_t c = r->tr_c;
		run_out(tw, track, ns, r->tr_a, 0, c & SMARM__TRACE_SW_PARKED,
			c >> 3 & 7, c & 7);
		run_in(tw, track, ns, r->tr_b, c & SMARM__TRACE_SW_WOKEN,
		       c >> SMARM__TRACE_SW_EPOCH_SHIFT);
		return;
	}
	case SMARM__TR_WAKE: {
		/* A send's WAKE (trace.h) is also its SEND, and may carry the
		 * woken's RECV: that half pairs even without an arrow. */
		struct tw_flow h = {
			.tf_ns = ns,
			.tf_track = track,
			.tf_send = (r->tr_flags & SMARM__TRF_SEND) != 0,
			.tf_flow = r->tr_a != 0 && o->to_open &&
				   o->to_pid == r->tr_a,
			.tf_recv = (r->tr_flags & SMARM__TRF_RECV) != 0,
			.tf_pid = r->tr_b,
			.tf_chan = r->tr_x,
		};
		/* Its SEND instant (as a SEND record's) waits with the half,
		 * so that in proto it is also the flow's start. */
		h.tf_inst = h.tf_send && o->to_open;
		h.tf_waker = r->tr_a;
		if (h.tf_flow || h.tf_recv)
			flow_half(tw, flow_key(r->tr_b, r->tr_c), &h);
		else if (h.tf_inst)
			send_instant(tw, &h, 0);
		return;
	}
	case SMARM__TR_LABEL: {
		struct tw_name *nm = name_slot(tw, r->tr_a);
		/* A registered name wins over a behaviour's text. */
		if (!(r->tr_flags & SMARM__TRF_NAME))
			return;
		if (nm->tn_pid != r->tr_a || r->tr_c == 0 || !nm->tn_label) {
			nm->tn_pid = r->tr_a;
			nm->tn_label = true;
			memcpy(nm->tn_text, r->tr_name, sizeof nm->tn_text);
			nm->tn_len = (uint8_t)strnlen(nm->tn_text,
						      sizeof nm->tn_text);
		}
		return;
	}
	case SMARM__TR_SEND:
	case SMARM__TR_RECV:
		/* On the run's slice only: the flows carry the pairing. */
		if (!o->to_open)
			return;
		break;
	default:
		break;
	}
	instant(tw, track, ns, r, 0);
}

/*
 * One pass: take what the rings hold, merge by time, write. Returns
 * whether some ring had more than a pass takes.
 */
static bool drain_pass(struct smarm__obs_trace *tw)
{
	struct smarm__trace *t = tw->tw_t;
	size_t n = 0;
	bool more = false;
	/* Room for every ring's pass, taken straight into the batch. */
	if (tw->tw_batch_cap < (size_t)t->tc_n * TRACE_TAKE) {
		size_t cap = (size_t)t->tc_n * TRACE_TAKE;
		struct smarm__trace_rec *b =
			realloc(tw->tw_batch, cap * sizeof *b);
		if (b == NULL) {
			tw->tw_failed = true;
			return false;
		}
		tw->tw_batch = b;
		tw->tw_batch_cap = cap;
	}
	for (uint32_t i = 0; i < t->tc_n; i++) {
		uint32_t got = smarm__trace_take(&t->tc_ring[i],
						 tw->tw_batch + n, TRACE_TAKE);
		tw->tw_open[i].to_at = n;
		n += got;
		tw->tw_open[i].to_end = n;
		if (got == TRACE_TAKE)
			more = true;
	}
	/* Each ring's run is in time order (TRACE-2): merge the runs, the
	 * earliest head first, a tie to the lower ring (no sort). */
	while (!tw->tw_failed) {
		uint32_t best = UINT32_MAX;
		uint64_t ts = 0;
		for (uint32_t i = 0; i < t->tc_n; i++) {
			const struct tw_open *o = &tw->tw_open[i];
			if (o->to_at < o->to_end &&
			    (best == UINT32_MAX ||
			     tw->tw_batch[o->to_at].tr_ts < ts)) {
				best = i;
				ts = tw->tw_batch[o->to_at].tr_ts;
			}
		}
		if (best == UINT32_MAX)
			break;
		rec_handle(tw, best, &tw->tw_batch[tw->tw_open[best].to_at++]);
	}
	out_flush(tw);
	return more;
}

static void *trace_main(void *arg)
{
	struct smarm__obs_trace *tw = arg;
	bool stop = false;
	smarm__thread_name("trace", -1);
	while (!stop) {
		/* A period, or until kicked (a run's end, close, a ring past
		 * half full). */
		smarm__trace_wait(tw->tw_t, TRACE_PERIOD_MS * 1000000ull);
		stop = atomic_load(&tw->tw_stop);
		while (drain_pass(tw) && !tw->tw_failed)
			;
	}
	return NULL;
}

/* ------------------------------------------------------------ the hooks */

static int fmt_of(const char *path, int fmt)
{
	size_t len = strlen(path);
	if (fmt != SMARM_TRACE_AUTO)
		return fmt;
	if (len >= 5 && strcmp(path + len - 5, ".json") == 0)
		return SMARM_TRACE_JSON;
	return SMARM_TRACE_PERFETTO;
}

int smarm__obs_trace_open(struct smarm_node *n, const struct smarm_config *cfg,
			  struct smarm__obs_trace **out)
{
	int fmt;
	const char *path = smarm__config_trace(cfg, &fmt);
	struct smarm__obs_trace *tw;
	uint32_t cap = 1;
	int64_t want = smarm__config_int(cfg, SMARM_OPT_TRACE_RING);
	sigset_t all, old;
	int rc;

	*out = NULL;
	if (path[0] == '\0') {
		const char *ring = getenv("SMARM_TRACE_RING");
		path = getenv("SMARM_TRACE_FILE");
		fmt = SMARM_TRACE_AUTO;
		if (path == NULL || path[0] == '\0')
			return 0;
		/* The environment's trace: its ring size too, if valid. */
		if (ring != NULL) {
			char *end;
			long long v = strtoll(ring, &end, 10);
			if (end != ring && *end == '\0' && v >= 64 &&
			    v <= 16777216)
				want = v;
		}
	}
	while (cap < (uint64_t)want)
		cap <<= 1;
	tw = calloc(1, sizeof *tw);
	if (tw == NULL)
		return SMARM_ENOMEM;
	tw->tw_fmt = fmt_of(path, fmt);
	tw->tw_node = n;
	tw->tw_serial = 1; /* the JSON "pid" of the node's tracks */
	tw->tw_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (tw->tw_fd < 0) {
		free(tw);
		return SMARM_ESYSTEM;
	}
	rc = smarm__trace_enable(n, cap);
	if (rc != 0)
		goto err_close;
	tw->tw_t = smarm__trace_of(n);
	tw->tw_ns_q40 = smarm__cycles_to_ns(1ull << 40);
	tw->tw_open = calloc(tw->tw_t->tc_n, sizeof *tw->tw_open);
	if (tw->tw_open == NULL) {
		rc = SMARM_ENOMEM;
		goto err_disable;
	}
	if (tw->tw_fmt == SMARM_TRACE_JSON)
		json_meta(tw);
	else
		proto_meta(tw);
	out_flush(tw);
	/* The thread takes no signal meant for the host. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&tw->tw_thr, NULL, trace_main, tw) == 0
		     ? 0
		     : SMARM_ESYSTEM;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		goto err_free;
	tw->tw_thr_on = true;
	*out = tw;
	return 0;

err_free:
	free(tw->tw_open);
	free(tw->tw_buf);
err_disable:
	smarm__trace_disable(n);
err_close:
	close(tw->tw_fd);
	free(tw);
	return rc;
}

void smarm__obs_trace_kick(struct smarm__obs_trace *tw)
{
	if (tw == NULL)
		return;
	smarm__trace_kick(tw->tw_t);
}

void smarm__obs_trace_close(struct smarm_node *n, struct smarm__obs_trace *tw)
{
	if (tw == NULL)
		return;
	atomic_store(&tw->tw_stop, true);
	smarm__trace_kick(tw->tw_t);
	pthread_join(tw->tw_thr, NULL);
	/* No worker runs: what is left is final. Close the open slices. */
	while (drain_pass(tw) && !tw->tw_failed)
		;
	for (size_t i = 0; i < FLOW_SLOTS; i++)
		flow_drop(tw, &tw->tw_flows[i]);
	for (uint32_t i = 0; i < tw->tw_t->tc_n; i++)
		slice_end(tw, i, tw->tw_last_ns, "trace end");
	if (tw->tw_fmt == SMARM_TRACE_JSON)
		json_end(tw);
	out_flush(tw);
	close(tw->tw_fd);
	smarm__trace_disable(n);
	free(tw->tw_open);
	free(tw->tw_batch);
	free(tw->tw_buf);
	free(tw);
}

uint64_t smarm__obs_trace_dropped(const struct smarm__obs_trace *tw)
{
	return tw != NULL ? smarm__trace_dropped(tw->tw_t) : 0;
}
