/* SPDX-License-Identifier: MIT */
/*
 * core.h - the core layer as the layers above see it (msg, io, and later
 * otp, behaviour, obs): the wait protocol, locks and rings, handles, the
 * running actor, timers, the no-preemption brackets and the subsystem
 * table. It defines no slot or node layout: those stay in core/ (slot.h,
 * node.h), with each module's own header (actor.h, sched.h, stack.h,
 * timer.h, preempt.h, subsys.h, wait.h, ring.h, lock.h, assert.h,
 * handle.h).
 *
 * Glossary.
 *   node    one runtime instance (smarm_node_t): config, slot table, run
 *           queue, timers, stack pool, idle coordinator, workers.
 *   worker  an OS thread running the scheduler loop (worker 0 is the
 *           thread that called smarm_node_run).
 *   slot    the per-actor record, found by pid index; reused for new actors
 *           with a bumped generation.
 *   word    the slot's packed atomic state: gen<<32 | epoch<<8 | state.
 *   epoch   a 24-bit wait identity. Every wait round opens one (wait.h);
 *           wakers register (pid, epoch); a wake succeeds only for the
 *           current epoch and consumes it, so stale wakes die at one CAS.
 *
 * Ownership: the node owns everything here. Workers exist only during a
 * run. Slots are never freed before the node is closed.
 * Locking: see lock.h for ranks. Slot fields are written by the slot's
 * owner (the spawner before publish; the running actor; the scheduler
 * holding the claim) except the fields marked "cold", which need the
 * slot's cold lock.
 * Invariants:
 *   INV-1 a pid is in the run queue at most once (pushes pair with
 *         transitions into QUEUED; only a scheduler moves QUEUED->RUNNING).
 *   INV-2 the only wildcard wake is a stop request; every other waker is
 *         epoch-stamped.
 *   INV-3 a wait round that ends without parking is retired (wait.c
 *         WAIT-6).
 *   INV-4 an actor's end is counted last in finalize, after every wake it
 *         produced, so live==0 (smarm__live: per-worker spawn and end
 *         counts, summed) with empty queues means the run is over.
 *   INV-5 a registration carrying a node pointer exists only while its
 *         actor is inside that wait (removed on wake, timeout or stop), so
 *         a foreign-thread waker never touches a node whose run ended.
 *   INV-6 death notifications (joiner wake) precede slot reclamation.
 * See: docs/architecture/layers.md.
 */
#ifndef SMARM_CORE_H
#define SMARM_CORE_H

#include "smarm/smarm.h"
#include "../arch/arch.h"
#include "assert.h"
#include "handle.h"
#include "lock.h"
#include "log.h"
#include "preempt.h"
#include "ring.h"
#include "sched.h"
#include "subsys.h"
#include "timer.h"
#include "trace.h"
#include "wait.h"

#endif /* SMARM_CORE_H */
