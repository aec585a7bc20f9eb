/*
 * vfs_cacheguard engine: the policy, free of Samba types. One header per engine
 * file; this one includes them all, for the glue
 *
 * Copyright (C) 2026 The vfs_cacheguard authors
 *
 * This program is free software; you can redistribute it and/or modify
 * it under the terms of the GNU General Public License as published by
 * the Free Software Foundation; either version 3 of the License, or
 * (at your option) any later version.
 *
 * This program is distributed in the hope that it will be useful,
 * but WITHOUT ANY WARRANTY; without even the implied warranty of
 * MERCHANTABILITY or FITNESS FOR A PARTICULAR PURPOSE.  See the
 * GNU General Public License for more details.
 *
 * You should have received a copy of the GNU General Public License
 * along with this program.  If not, see <http://www.gnu.org/licenses/>.
 */

#ifndef CACHEGUARD_H
#define CACHEGUARD_H

#include "cg_options.h"
#include "cg_stream.h"
#include "cg_share.h"
#include "cg_stack.h"
#include "cg_file.h"
#include "cg_prefetch.h"
#include "cg_budget.h"
#include "cg_dev.h"

#endif /* CACHEGUARD_H */
