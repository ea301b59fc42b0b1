/* clocksum.h - a run's clock evidence (clockalign.h) kept in its job
 * summary (export/job/jobsum.h) and read back from there: `xpcorr job` aligns
 * thousands of ranks on their summaries' collective anchors without
 * opening a rank's database.
 *
 *   xc_clock_run_load(run_db, &r);  xc_clock_run_save(sum_db, &r);   // at ingest
 *   xc_clock_run_read(sum_db, &r);  xc_clock_align(&ref, &r, &s);   // at the job
 */
#ifndef XC_CLOCKSUM_H
#define XC_CLOCKSUM_H

#include <sqlite3.h>

#include "correlate/clockalign.h"

/* xs_clock and xs_marker in sum (made here). 0 or -EIO. */
int xc_clock_run_save(sqlite3 *sum, const struct xc_clock_run *r);
/* What xc_clock_run_save wrote. 0, -EIO or -ENOMEM; xc_clock_run_free after. */
int xc_clock_run_read(sqlite3 *sum, struct xc_clock_run *r);

#endif
