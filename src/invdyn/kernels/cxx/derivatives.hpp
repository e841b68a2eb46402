// Analytic derivatives of inverse and forward dynamics, by the algorithm of Carpentier and
// Mansard (2018, "Analytical Derivatives of Rigid Body Dynamics Algorithms", RSS): one forward
// pass that carries, in world coordinates, each dof's motion column J, its time derivative
// v_i x J and the derivatives of body velocities and accelerations with respect to the dof
// (dV/dq, dA/dq, dA/dv); one backward pass that accumulates composite inertias Y, their time
// derivatives dY and the subtree forces, and projects them on the joints. The derivatives in q
// are in the tangent space: the joint's own motion, as v moves it.
#pragma once

#include "dynamics.hpp"

namespace invdyn {

// add scale [x]_x to the 3x3 block of the (6, 6) out at (top, left)
inline void add_skew(double* out, int top, int left, double x0, double x1, double x2,
                     double scale) {
  out[6 * top + left + 1] -= scale * x2;
  out[6 * top + left + 2] += scale * x1;
  out[6 * (top + 1) + left] += scale * x2;
  out[6 * (top + 1) + left + 2] -= scale * x0;
  out[6 * (top + 2) + left] -= scale * x1;
  out[6 * (top + 2) + left + 1] += scale * x0;
}

// out (6) = mat x, or mat^T x when `transpose`, for mat (6, 6)
inline void matvec(const double* mat, const double* x, double* out, bool transpose) {
  for (int r = 0; r < 6; ++r) {
    double acc = 0.0;
    for (int c = 0; c < 6; ++c) acc += (transpose ? mat[6 * c + r] : mat[6 * r + c]) * x[c];
    out[r] = acc;
  }
}

// out (6) += mat x for mat (6, 6)
inline void add_matvec(const double* mat, const double* x, double* out) {
  for (int r = 0; r < 6; ++r) {
    double acc = 0.0;
    for (int c = 0; c < 6; ++c) acc += mat[6 * r + c] * x[c];
    out[r] += acc;
  }
}

// x . y for x, y (6)
inline double dot(const double* x, const double* y) {
  return x[0] * y[0] + x[1] * y[1] + x[2] * y[2] + x[3] * y[3] + x[4] * y[4] + x[5] * y[5];
}

// the (6, 6) matrix dY of a body of world inertia Y (6, 6) moving at vel, into out: the time
// derivative of Y, v x* Y - Y v x, plus the matrix of m -> m x* (Y v), so that
// d(Y a + v x* Y v) along a motion m of the body is dY m plus the terms of a. With
// Y = [[I, [c]x], [[c]x^T, m 1]], v = (w, u) and Y v = (n, g), the blocks are
// [w]x I - I [w]x - (c u^T + u c^T) + 2 (u . c) 1 - [n]x on the top left, -2 [g]x on the
// bottom left, zero on the right
inline void inertia_rate(const double* inertia, const Vec6& vel, double* out) {
  const double w0 = vel[0], w1 = vel[1], w2 = vel[2], u0 = vel[3], u1 = vel[4], u2 = vel[5];
  const double mass = inertia[6 * 3 + 3];
  const double c0 = inertia[6 * 2 + 4], c1 = inertia[6 * 0 + 5], c2 = inertia[6 * 1 + 3];
  const double* i = inertia;
  // n = I w + c x u, g = m u - c x w
  const double n0 = i[0] * w0 + i[1] * w1 + i[2] * w2 + c1 * u2 - c2 * u1;
  const double n1 = i[6] * w0 + i[7] * w1 + i[8] * w2 + c2 * u0 - c0 * u2;
  const double n2 = i[12] * w0 + i[13] * w1 + i[14] * w2 + c0 * u1 - c1 * u0;
  const double g0 = mass * u0 - (c1 * w2 - c2 * w1);
  const double g1 = mass * u1 - (c2 * w0 - c0 * w2);
  const double g2 = mass * u2 - (c0 * w1 - c1 * w0);
  std::fill(out, out + 36, 0.0);
  const double skew_w[3][3] = {{0.0, -w2, w1}, {w2, 0.0, -w0}, {-w1, w0, 0.0}};
  const double u[3] = {u0, u1, u2};
  const double c[3] = {c0, c1, c2};
  const double twice_u_dot_c = 2.0 * (u0 * c0 + u1 * c1 + u2 * c2);
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) {
      double value = -(c[r] * u[k] + u[r] * c[k]);
      for (int j = 0; j < 3; ++j)
        value += skew_w[r][j] * i[6 * j + k] - i[6 * r + j] * skew_w[j][k];
      out[6 * r + k] = value + (r == k ? twice_u_dot_c : 0.0);
    }
  add_skew(out, 0, 0, n0, n1, n2, -1.0);
  add_skew(out, 3, 0, g0, g1, g2, -2.0);
}

// the derivatives d tau / dq, d tau / dv and d tau / da = M (nv, nv each) of rnea at
// (q, v, a, fext)
// compiled for each x86-64 level: with fused multiply-adds and wider registers where the
// processor has them, about a tenth faster on TALOS (AVX-512) than the baseline
INVDYN_SIMD_CLONES
inline int64_t rnea_derivatives(const Packed& m, const double* q, const double* v,
                                const double* a, const double* fext, int64_t nforces, double* dq,
                                double* dv, double* da) {
  struct WorkTag;
  struct WorldTag;
  struct MotionsTag;
  struct MatricesTag;
  struct ColumnsTag;
  struct InsideTag;
  struct OwnerTag;
  const int64_t status = check_state(m, q, v, a, fext, nforces);
  if (status != 0) return status;
  const int64_t nbody = m.nbody;
  const int64_t nv = m.nv;
  double* w = new_work<WorkTag>(m);
  forward_pass(m, nbody, q, v, a, w);
  double* world = scratch<WorldTag>(12 * nbody);
  world_placements(m, nbody, q, w, world, false);
  // per body, world coordinates: velocity, acceleration (gravity in), force, inertia and its rate
  double* motions = scratch<MotionsTag>(3 * 6 * nbody);
  double* vel = motions;
  double* acc = motions + 6 * nbody;
  double* force = motions + 12 * nbody;
  double* matrices = scratch<MatricesTag>(2 * 36 * nbody);
  double* inertia = matrices;
  double* rate = matrices + 36 * nbody;
  // per dof, world coordinates: its column J and the derivatives of its body's motion; then,
  // for the backward pass, Y J, dY^T J and the force derivatives dF/dq, dF/dv of its subtree
  double* columns = scratch<ColumnsTag>(8 * 6 * nv);
  double* jac = columns;
  double* dvdq = columns + 6 * nv;
  double* dadq = columns + 12 * nv;
  double* dadv = columns + 18 * nv;
  double* dfda = columns + 24 * nv;
  double* dytj = columns + 30 * nv;
  double* dfdq = columns + 36 * nv;
  double* dfdv = columns + 42 * nv;
  std::fill(dvdq, dvdq + 6 * nv, 0.0);
  const Vec6 world_acc = row(w, nbody, W_A);
  for (int64_t i = 0; i < nbody; ++i) {
    // forward: the body's state in world coordinates
    const double* placed = world + 12 * i;
    put(vel + 6 * i, motion_to_world(placed, row(w, i, W_V)));
    put(acc + 6 * i, motion_to_world(placed, row(w, i, W_A)));
    Vec6 net = row(w, i, W_F);
    for (int k = 0; k < 6; ++k) net[k] -= nforces > 0 ? fext[6 * i + k] : 0.0;
    put(force + 6 * i, force_to_world(placed, net));
    double moved[13] = {};
    add_inertia_to(placement_at(placed), m.body(i) + MASS, moved);
    spatial_inertia(moved, inertia + 36 * i);
    inertia_rate(inertia + 36 * i, six(vel + 6 * i), rate + 36 * i);
    // each dof's column and the derivatives of the body's motion along it
    const int64_t parent = m.parent(i);
    for (int64_t k = 0; k < m.joint_nv(i); ++k) {
      const int64_t d = m.vadr(i) + k;
      const Vec6 jd = motion_to_world(placed, column(m, i, k));
      put(jac + 6 * d, jd);
      // dA/dv = v_i x J (+ dV/dq), dV/dq = v_parent x J,
      // dA/dq = a_parent x J + v_parent x dV/dq
      put(dadv + 6 * d, cross_motion(six(vel + 6 * i), jd));
      if (parent < 0) {
        put(dadq + 6 * d, cross_motion(world_acc, jd));
        continue;
      }
      const Vec6 parent_vel = six(vel + 6 * parent);
      put(dvdq + 6 * d, cross_motion(parent_vel, jd));
      put(dadq + 6 * d, cross_motion(six(acc + 6 * parent), jd));
      const Vec6 carried = cross_motion(parent_vel, six(dvdq + 6 * d));
      for (int r = 0; r < 6; ++r) {
        dadq[6 * d + r] += carried[r];
        dadv[6 * d + r] += dvdq[6 * d + r];
      }
    }
  }
  // which bodies each body's subtree holds (inside[k, j]: body j is in k's subtree), and the
  // body of each dof
  char* inside = scratch<InsideTag, char>(nbody * nbody);
  int64_t* owner = scratch<OwnerTag, int64_t>(nv);
  std::fill(inside, inside + nbody * nbody, 0);
  for (int64_t j = 0; j < nbody; ++j) {
    for (int64_t k = 0; k < m.joint_nv(j); ++k) owner[m.vadr(j) + k] = j;
    for (int64_t k = j; k >= 0; k = m.parent(k)) inside[nbody * k + j] = 1;
  }
  std::fill(dq, dq + nv * nv, 0.0);
  std::fill(dv, dv + nv * nv, 0.0);
  std::fill(da, da + nv * nv, 0.0);
  for (int64_t i = nbody - 1; i >= 0; --i) {
    // backward: Y, dY and the force are those of the subtree of body i
    const int64_t first = m.vadr(i);
    const int64_t last = first + m.joint_nv(i);
    const double* yi = inertia + 36 * i;
    const double* dyi = rate + 36 * i;
    for (int64_t d = first; d < last; ++d) {
      matvec(yi, jac + 6 * d, dfda + 6 * d, false);
      matvec(dyi, jac + 6 * d, dytj + 6 * d, true);
      matvec(dyi, dvdq + 6 * d, dfdq + 6 * d, false);
      add_matvec(yi, dadq + 6 * d, dfdq + 6 * d);
      matvec(dyi, jac + 6 * d, dfdv + 6 * d, false);
      add_matvec(yi, dadv + 6 * d, dfdv + 6 * d);
    }
    // rows of the dofs below body i, columns of its own
    for (int64_t r = last; r < nv; ++r) {
      if (!inside[nbody * i + owner[r]]) continue;
      for (int64_t d = first; d < last; ++d) {
        dq[nv * r + d] = dot(dfda + 6 * r, dadq + 6 * d) + dot(dytj + 6 * r, dvdq + 6 * d);
        dv[nv * r + d] = dot(dfda + 6 * r, dadv + 6 * d) + dot(dytj + 6 * r, jac + 6 * d);
      }
    }
    // rows of its own dofs, columns of its subtree
    for (int64_t c = first; c < nv; ++c) {
      if (!inside[nbody * i + owner[c]]) continue;
      for (int64_t r = first; r < last; ++r) {
        da[nv * r + c] = dot(jac + 6 * r, dfda + 6 * c);
        da[nv * c + r] = da[nv * r + c];
        dq[nv * r + c] = dot(jac + 6 * r, dfdq + 6 * c);
        dv[nv * r + c] = dot(jac + 6 * r, dfdv + 6 * c);
      }
    }
    // the force of the subtree turns with the dof: J x* f, for the rows above
    for (int64_t d = first; d < last; ++d) {
      const Vec6 turn = cross_force(six(jac + 6 * d), six(force + 6 * i));
      for (int r = 0; r < 6; ++r) dfdq[6 * d + r] += turn[r];
    }
    const int64_t p = m.parent(i);
    if (p >= 0) {
      for (int r = 0; r < 6; ++r) {
        force[6 * p + r] += force[6 * i + r];
        for (int c = 0; c < 6; ++c) {
          inertia[36 * p + 6 * r + c] += inertia[36 * i + 6 * r + c];
          rate[36 * p + 6 * r + c] += rate[36 * i + 6 * r + c];
        }
      }
    }
  }
  // joint terms: armature on the mass matrix, viscous friction on dtau/dv
  for (int64_t k = 0; k < nv; ++k) {
    da[nv * k + k] += m.armature(k);
    dv[nv * k + k] += m.damping(k);
  }
  const int64_t result = status_of_result(dq, nv * nv);
  return result != 0 ? result : status_of_result(dv, nv * nv);
}

// the derivatives d qdd / dq, d qdd / dv and d qdd / dtau = M^-1 (nv, nv each) of aba at
// (q, v, tau, fext): with qdd = aba(q, v, tau), rnea(q, v, qdd) = tau holds identically, so
// d qdd / dx = -M^-1 d rnea / dx at (q, v, qdd) for x = q, v, and d qdd / dtau = M^-1
inline int64_t aba_derivatives(const Packed& m, const double* q, const double* v,
                               const double* tau, const double* fext, int64_t nforces,
                               double* dq, double* dv, double* dtau) {
  struct QddTag;
  struct MassTag;
  struct DrneaDqTag;
  struct DrneaDvTag;
  const int64_t nv = m.nv;
  double* qdd = scratch<QddTag>(nv);
  int64_t status = aba(m, q, v, tau, fext, nforces, qdd);
  if (status != 0) return status;
  double* mass = scratch<MassTag>(nv * nv);
  double* drnea_dq = scratch<DrneaDqTag>(nv * nv);
  double* drnea_dv = scratch<DrneaDvTag>(nv * nv);
  status = rnea_derivatives(m, q, v, qdd, fext, nforces, drnea_dq, drnea_dv, mass);
  if (status != 0) return status;
  // M^-1 by its Cholesky factor L (M = L L^T), in place of M's lower triangle: L^-T L^-1
  for (int64_t j = 0; j < nv; ++j) {
    double diagonal = mass[nv * j + j];
    for (int64_t k = 0; k < j; ++k) diagonal -= mass[nv * j + k] * mass[nv * j + k];
    if (!(diagonal > 0.0)) return STATUS_SINGULAR;
    mass[nv * j + j] = std::sqrt(diagonal);
    for (int64_t r = j + 1; r < nv; ++r) {
      double value = mass[nv * r + j];
      for (int64_t k = 0; k < j; ++k) value -= mass[nv * r + k] * mass[nv * j + k];
      mass[nv * r + j] = value / mass[nv * j + j];
    }
  }
  for (int64_t c = 0; c < nv; ++c) {
    // column c of M^-1: solve L y = e_c, then L^T x = y
    for (int64_t r = 0; r < nv; ++r) {
      double value = r == c ? 1.0 : 0.0;
      for (int64_t k = 0; k < r; ++k) value -= mass[nv * r + k] * dtau[nv * k + c];
      dtau[nv * r + c] = value / mass[nv * r + r];
    }
    for (int64_t r = nv - 1; r >= 0; --r) {
      double value = dtau[nv * r + c];
      for (int64_t k = r + 1; k < nv; ++k) value -= mass[nv * k + r] * dtau[nv * k + c];
      dtau[nv * r + c] = value / mass[nv * r + r];
    }
  }
  // d qdd / dx = -M^-1 d rnea / dx
  for (int64_t r = 0; r < nv; ++r)
    for (int64_t c = 0; c < nv; ++c) {
      double acc_q = 0.0;
      double acc_v = 0.0;
      for (int64_t k = 0; k < nv; ++k) {
        acc_q -= dtau[nv * r + k] * drnea_dq[nv * k + c];
        acc_v -= dtau[nv * r + k] * drnea_dv[nv * k + c];
      }
      dq[nv * r + c] = acc_q;
      dv[nv * r + c] = acc_v;
    }
  return status_of_result(dq, nv * nv);
}

}  // namespace invdyn
