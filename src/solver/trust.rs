//! Trust-region CG (Steihaug-Toint), PETSc's KSPSTCG and hIPPYlib's CGSolverSteihaug: CG from a zero
//! guess, stopped on the boundary of the region ||x||_P <= radius when a step would leave it
//! ([`Reason::ConvergedStepLength`]) or when p^H A p <= 0 ([`Reason::ConvergedNegCurve`]: the
//! boundary point along p). P is the inverse of the preconditioner M (the identity without one), so
//! its norms come from recurrences of values CG reduces anyway (Conn, Gould and Toint, "Trust-region
//! methods", 7.5.1): no operator application and no reduction is added.
//!
//! [`Reason::ConvergedStepLength`]: super::Reason::ConvergedStepLength
//! [`Reason::ConvergedNegCurve`]: super::Reason::ConvergedNegCurve

/// x^H P x, Re(x^H P p) and p^H P p of the current iterate and direction, and the radius squared.
pub(crate) struct TrustRegion {
    radius2: f64,
    xpx: f64,
    xpp: f64,
    ppp: f64,
}

impl TrustRegion {
    /// At x = 0, p = M r with r^H M r = `rz0`.
    pub(crate) fn new(radius: f64, rz0: f64) -> TrustRegion {
        TrustRegion {
            radius2: radius * radius,
            xpx: 0.0,
            xpp: 0.0,
            ppp: rz0,
        }
    }

    /// The step tau >= 0 along p that reaches the boundary: ||x + tau p||_P = radius. `None` when p
    /// has no length in this norm (p^H P p not positive and finite).
    pub(crate) fn to_boundary(&self) -> Option<f64> {
        let (a, b, c) = (self.ppp, self.xpp, self.xpx - self.radius2);
        if !(a > 0.0 && a.is_finite()) {
            return None;
        }
        // the positive root of a t^2 + 2 b t + c (c <= 0 inside the region), without cancellation
        let d = (b * b - a * c).max(0.0).sqrt();
        let t = if b > 0.0 { -c / (b + d) } else { (d - b) / a };
        Some(t.max(0.0))
    }

    /// Does the step alpha along p end on or outside the boundary?
    pub(crate) fn leaves(&self, alpha: f64) -> bool {
        self.xpx + 2.0 * alpha * self.xpp + alpha * alpha * self.ppp >= self.radius2
    }

    /// After x += alpha p, r -= alpha A p, z = M r with r^H z = `rz`, p = z + beta p.
    pub(crate) fn advance(&mut self, alpha: f64, beta: f64, rz: f64) {
        self.xpx += 2.0 * alpha * self.xpp + alpha * alpha * self.ppp;
        self.xpp = beta * (self.xpp + alpha * self.ppp);
        self.ppp = rz + beta * beta * self.ppp;
    }
}
