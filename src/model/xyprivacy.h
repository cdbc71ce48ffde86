/* xyprivacy.h — (X,Y)-anonymity and (X,Y)-linkability ([Wang06] §3.1, docs/ARCHITECTURE.md §5).
 *
 * Both are stated over the values x on X of a (joined) table:
 *   a_Y(x)  the number of distinct values on Y that co-occur with x;
 *           (X,Y)-anonymity holds when A_Y(X) = min_x a_Y(x) >= k;
 *   l_y(x)  a(x, y) / a(x), the share of the records with x that also have y;
 *           (X,Y)-linkability holds when L_Y(X) = max_{x, y} l_y(x) <= p,
 *           y ranging over the sensitive values of Y (all of them by default).
 * Algorithms measure one "risk" number so both read alike: -a_Y(x) or l_y(x),
 * larger is worse; the requirement holds when the largest risk is at most the
 * bound (-k or p). */
#ifndef AK_XYPRIVACY_H
#define AK_XYPRIVACY_H

#include <stdint.h>

typedef enum xy_kind { XY_NONE = 0, XY_ANONYMITY, XY_LINKABILITY } xy_kind;

typedef struct xy_model {
    xy_kind kind;
    uint64_t k;   /* anonymity */
    double p;     /* linkability, 0 < p <= 1 */
} xy_model;

/* The risk bound of the model (-k or p). */
static inline double xy_bound(const xy_model *m) { return m->kind == XY_ANONYMITY ? -(double)m->k : m->p; }

/* Whether a largest risk satisfies the model. */
static inline int xy_holds(const xy_model *m, double risk) { return risk <= xy_bound(m); }

/* Risk of one x: anonymity from a_Y(x), linkability from a(x, y) and a(x). */
static inline double xy_risk_anonymity(uint64_t a_y) { return -(double)a_y; }
static inline double xy_risk_linkability(uint64_t a_xy, uint64_t a_x) { return a_x ? (double)a_xy / (double)a_x : 0; }

#endif
