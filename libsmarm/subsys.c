/* SPDX-License-Identifier: MIT */
/*
 * subsys.c - the subsystems built into this library, by id: the one file
 * that names every layer, so that the core reaches the layers above it
 * only through their hook tables (core/node.c) and never by name.
 *
 * Ownership: the tables are constant and belong to their layers.
 * Invariants: INV-1 entry id holds the subsystem whose SMARM__SUB_* is
 * id; a layer not built yet leaves its entry NULL.
 * See: docs/architecture/subsystems.md.
 */
#include "core/core.h"
#include "io/io.h"
#include "otp/reg.h"
#include "otp/sig.h"
#include "behaviour/gen_server.h"
#include "obs/obs.h"

const struct smarm__subsys *const smarm__builtin_subsys[SMARM__SUB_MAX] = {
	[SMARM__SUB_IO] = &smarm__io_subsys,
	[SMARM__SUB_REG] = &smarm__reg_subsys,
	[SMARM__SUB_OTP] = &smarm__sig_subsys,
	[SMARM__SUB_BEHAVIOUR] = &smarm__bhv_subsys,
	[SMARM__SUB_OBS] = &smarm__obs_subsys,
};
