"""Strong-Wolfe line search with cubic interpolation (Nocedal & Wright, algorithms 3.5 / 3.6),
on flat numpy vectors: what ``LBFGS(line_search_fn="strong_wolfe")`` runs."""


def cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clamped to ``bounds``."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = d2_square ** 0.5
        if x1 <= x2:
            pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(pos, lo), hi)
    return (lo + hi) / 2.0


def _bracket_phase(obj, x, t, d, f, g, gtd, c1, c2, max_ls):
    f_new, g_new = obj(x, t, d)
    evals, gtd_new = 1, g_new.dot(d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    ls_iter = 0
    while ls_iter < max_ls:
        bracketed = (f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev))
        if not bracketed and abs(gtd_new) <= -c2 * gtd:      # NOTE: checked before gtd_new >= 0
            return [t], [f_new], [g_new], None, True, ls_iter, evals
        if bracketed or gtd_new >= 0:
            return ([t_prev, t], [f_prev, f_new], [g_prev, g_new.copy()], [gtd_prev, gtd_new], False,
                    ls_iter, evals)
        lo, hi = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(lo, hi))
        f_prev, g_prev, gtd_prev = f_new, g_new.copy(), gtd_new
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    return [0, t], [f, f_new], [g, g_new], None, False, ls_iter, evals


def strong_wolfe(obj, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Search along ``d`` from ``x`` for a step ``t`` meeting the strong Wolfe conditions.

    ``obj(x, t, d) -> (loss, flat_grad)`` evaluates at x + t d (and restores x).
    Returns (loss, flat_grad, t, evaluations).
    """
    d_norm = abs(d).max()
    g = g.copy()
    br, br_f, br_g, br_gtd, done, ls_iter, evals = _bracket_phase(obj, x, t, d, f, g, gtd, c1, c2, max_ls)
    insuf = False
    low, high = (0, 1) if br_f[0] <= br_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(br[1] - br[0]) * d_norm < tolerance_change:
            break
        t = cubic_interpolate(br[0], br_f[0], br_gtd[0], br[1], br_f[1], br_gtd[1])
        eps = 0.1 * (max(br) - min(br))
        if min(max(br) - t, t - min(br)) < eps:
            if insuf or t >= max(br) or t <= min(br):
                t = max(br) - eps if abs(t - max(br)) < abs(t - min(br)) else min(br) + eps
                insuf = False
            else:
                insuf = True
        else:
            insuf = False
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= br_f[low]:
            br[high], br_f[high], br_g[high], br_gtd[high] = t, f_new, g_new.copy(), gtd_new
            low, high = (0, 1) if br_f[0] <= br_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (br[high] - br[low]) >= 0:
                br[high], br_f[high], br_g[high], br_gtd[high] = br[low], br_f[low], br_g[low], br_gtd[low]
            br[low], br_f[low], br_g[low], br_gtd[low] = t, f_new, g_new.copy(), gtd_new
    return br_f[low], br_g[low], br[low], evals
