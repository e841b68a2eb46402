// Single-state kernels of rigid-body dynamics: RNEA, CRBA, ABA and forward kinematics. Each
// writes into arrays its caller owns and returns a status (packed.hpp).
#pragma once

#include <vector>

#include "spatial.hpp"

namespace invdyn {

// a buffer of n values owned by the calling thread, one per `Tag`, reused across calls
template <typename Tag, typename T = double>
inline T* scratch(size_t n) {
  thread_local std::vector<T> buffer;
  if (buffer.size() < n) buffer.resize(n);
  return buffer.data();
}

// a work array (nbody + 1, WORK_COLUMNS) whose last row is the world: at rest, accelerating
// against gravity; `gravity` false leaves the world at rest without it
template <typename Tag>
inline double* new_work(const Packed& m, bool gravity = true) {
  double* w = scratch<Tag>(WORK_COLUMNS * (m.nbody + 1));
  double* world = w + WORK_COLUMNS * m.nbody;
  std::fill(world, world + WORK_COLUMNS, 0.0);
  if (gravity)
    for (int k = 0; k < 3; ++k) world[W_A + 3 + k] = -m.gravity()[k];
  return w;
}

// placements, velocities, accelerations (the world row's gravity in) and inertial forces of
// bodies 0..count-1, each computed in registers and stored once in w
inline void forward_pass(const Packed& m, int64_t count, const double* q, const double* v,
                         const double* a, double* w) {
  for (int64_t i = 0; i < count; ++i) {
    joint_placement(m, q, i, w);
    const int64_t parent = m.parent(i) >= 0 ? m.parent(i) : m.nbody;
    const Placement p = placement(w, i);
    // v_i = X v_parent + S qd
    const Vec6 joint_velocity = joint_motion(m, i, v);
    const Vec6 vel = plus(to_child(p, row(w, parent, W_V)), joint_velocity);
    // a_i = X a_parent + S qdd + v_i x S qd
    Vec6 acc = plus(to_child(p, row(w, parent, W_A)), joint_motion(m, i, a));
    acc = plus(acc, cross_motion(vel, joint_velocity));
    // f_i = I a_i + v_i x* I v_i
    store(w, i, W_V, vel);
    store(w, i, W_A, acc);
    store(w, i, W_F, inertial_force(m.body(i) + MASS, vel, acc));
  }
}

// add armature, viscous and Coulomb friction forces to tau (when the model has any)
inline void add_joint_terms(const Packed& m, const double* v, const double* a, double* tau) {
  if (!m.has_joint_terms()) return;
  for (int64_t k = 0; k < m.nv; ++k)
    tau[k] += m.armature(k) * a[k] + m.damping(k) * v[k] + m.friction(k) * sign(v[k]);
}

// the status of an rnea result tau: its inputs are checked only when it is not finite, as
// every entry of q, v, a and fext reaches tau through products and sums
inline int64_t rnea_status(const Packed& m, const double* q, const double* v, const double* a,
                           const double* fext, int64_t nforces, const double* tau) {
  if (status_of_result(tau, m.nv) == 0) return 0;
  const int64_t culprit = check_state(m, q, v, a, fext, nforces);
  return culprit != 0 ? culprit : STATUS_OVERFLOW;
}

// the backward pass of rnea over the forces in w: tau_i = S^T f_i, then f_i to the parent
inline void backward_pass(const Packed& m, double* w, double* tau) {
  for (int64_t i = m.nbody - 1; i >= 0; --i) {
    const Vec6 f = row(w, i, W_F);
    joint_force(m, i, f, tau);
    const int64_t parent = m.parent(i);
    if (parent >= 0) store(w, parent, W_F, plus(row(w, parent, W_F), force_up(placement(w, i), f)));
  }
}

// Recursive Newton-Euler: the joint forces tau (nv) of (q, v, a) under the external forces
// fext (nforces = 0 or nbody, 6)
inline int64_t rnea(const Packed& m, const double* q, const double* v, const double* a,
                    const double* fext, int64_t nforces, double* tau) {
  struct Tag;
  double* w = new_work<Tag>(m);
  forward_pass(m, m.nbody, q, v, a, w);
  // f_i = I a_i + v_i x* I v_i - f_ext_i
  for (int64_t i = 0; i < nforces; ++i)
    for (int k = 0; k < 6; ++k) w[WORK_COLUMNS * i + W_F + k] -= fext[6 * i + k];
  backward_pass(m, w, tau);
  add_joint_terms(m, v, a, tau);
  return rnea_status(m, q, v, a, fext, nforces, tau);
}

// add body i's inertia comp[i] (mass, h, I_o: 13 values a row), moved by its placement p in
// the parent, to comp[parent]:
// h' = R h + m p ;  I' = R I R^T + (2 p.Rh + m |p|^2) 1 - (Rh p^T + p Rh^T + m p p^T)
inline void add_inertia_to(const Placement& p, const double* inertia, double* target) {
  const double mass = inertia[0];
  const double p0 = p[9], p1 = p[10], p2 = p[11];
  double rh[3], ri[9];
  for (int a = 0; a < 3; ++a) {
    rh[a] = p[3 * a] * inertia[1] + p[3 * a + 1] * inertia[2] + p[3 * a + 2] * inertia[3];
    for (int b = 0; b < 3; ++b)
      ri[3 * a + b] = p[3 * a] * inertia[4 + b] + p[3 * a + 1] * inertia[7 + b] +
                      p[3 * a + 2] * inertia[10 + b];
  }
  const double diag = 2.0 * (p0 * rh[0] + p1 * rh[1] + p2 * rh[2]) +
                      mass * (p0 * p0 + p1 * p1 + p2 * p2);
  const double pos[3] = {p0, p1, p2};
  target[0] += mass;
  for (int a = 0; a < 3; ++a) {
    target[1 + a] += rh[a] + mass * pos[a];
    for (int b = 0; b < 3; ++b) {
      double value = ri[3 * a] * p[3 * b] + ri[3 * a + 1] * p[3 * b + 1] +
                     ri[3 * a + 2] * p[3 * b + 2];
      value -= rh[a] * pos[b] + pos[a] * rh[b] + mass * pos[a] * pos[b];
      if (a == b) value += diag;
      target[4 + 3 * a + b] += value;
    }
  }
}

// the composite inertia (mass, h, I_o) of each body's subtree in its coordinates, (nbody, 13),
// from the joint placements in w
template <typename Tag>
inline double* composite_inertias(const Packed& m, const double* w) {
  double* comp = scratch<Tag>(13 * m.nbody);
  for (int64_t i = 0; i < m.nbody; ++i)
    std::copy(m.body(i) + MASS, m.body(i) + MASS + 13, comp + 13 * i);
  for (int64_t i = m.nbody - 1; i >= 0; --i)
    if (m.parent(i) >= 0) add_inertia_to(placement(w, i), comp + 13 * i, comp + 13 * m.parent(i));
  return comp;
}

// Composite rigid-body algorithm: the mass matrix M(q) (nv, nv)
inline int64_t crba(const Packed& m, const double* q, double* mass_matrix) {
  struct Tag;
  struct CompositeTag;
  if (!all_finite(q, m.nq)) return 1;
  const int64_t nv = m.nv;
  double* w = new_work<Tag>(m);
  for (int64_t i = 0; i < m.nbody; ++i) joint_placement(m, q, i, w);
  // composite inertias in body coordinates, children folded into parents
  const double* comp = composite_inertias<CompositeTag>(m, w);
  std::fill(mass_matrix, mass_matrix + nv * nv, 0.0);
  for (int64_t i = 0; i < m.nbody; ++i) {
    const int64_t va = m.vadr(i);
    for (int64_t k = 0; k < m.joint_nv(i); ++k) {
      // F = I^c_i S_ik, projected on every joint from i up to the root
      Vec6 force = inertia_product(comp + 13 * i, column(m, i, k));
      for (int64_t j = i;;) {
        const int64_t vj = m.vadr(j);
        for (int64_t kk = 0; kk < m.joint_nv(j); ++kk) {
          const double value = project(m, j, kk, force);
          mass_matrix[(vj + kk) * nv + va + k] = value;
          mass_matrix[(va + k) * nv + vj + kk] = value;
        }
        if (m.parent(j) < 0) break;
        force = force_up(placement(w, j), force);
        j = m.parent(j);
      }
    }
  }
  for (int64_t k = 0; k < nv; ++k) mass_matrix[k * nv + k] += m.armature(k);
  return status_of_result(mass_matrix, nv * nv);
}

// columns of the ABA work array (nbody, ABA_COLUMNS), a row per body: articulated inertia I^A
// (36, row-major), articulated bias force p^A (6), U = I^A S (6 n: column k at 6 k), D^-1
// (n x n, row stride 6), u = tau - S^T p^A (n)
constexpr int S_IA = 0, S_PA = 36, S_U = 42, S_DINV = 78, S_UV = 114;
constexpr int ABA_COLUMNS = 120;

// body i's (6, 6) spatial inertia [[I_o, h x], [(h x)^T, m 1]] into out (36, row-major)
inline void spatial_inertia(const double* inertia, double* out) {
  const double mass = inertia[0], h0 = inertia[1], h1 = inertia[2], h2 = inertia[3];
  const double* i = inertia + 4;
  const double rows[36] = {i[0], i[1], i[2], 0.0, -h2, h1,   i[3], i[4], i[5], h2,  0.0, -h0,
                           i[6], i[7], i[8], -h1, h0,  0.0,  0.0,  h2,   -h1,  mass, 0.0, 0.0,
                           -h2,  0.0,  h0,   0.0, mass, 0.0, h1,   -h0,  0.0,  0.0,  0.0, mass};
  std::copy(rows, rows + 36, out);
}

// replace the (n, n) symmetric positive definite matrix d (row stride 6) by its inverse,
// through its Cholesky factor; false if it is not positive definite
inline bool invert_spd(double* d, int64_t n) {
  if (n == 1) {
    if (!(d[0] > 0.0)) return false;
    d[0] = 1.0 / d[0];
    return true;
  }
  double l[36];
  for (int64_t r = 0; r < n; ++r)
    for (int64_t c = 0; c <= r; ++c) {
      double acc = d[6 * r + c];
      for (int64_t k = 0; k < c; ++k) acc -= l[6 * r + k] * l[6 * c + k];
      if (r == c) {
        if (!(acc > 0.0)) return false;
        l[6 * r + r] = std::sqrt(acc);
      } else {
        l[6 * r + c] = acc / l[6 * c + c];
      }
    }
  // column j of the inverse: solve L y = e_j, then L^T x = y, in place of row j of d
  for (int64_t j = 0; j < n; ++j) {
    double* x = d + 6 * j;
    for (int64_t r = 0; r < n; ++r) {
      double acc = r == j ? 1.0 : 0.0;
      for (int64_t k = 0; k < r; ++k) acc -= l[6 * r + k] * x[k];
      x[r] = acc / l[6 * r + r];
    }
    for (int64_t r = n - 1; r >= 0; --r) {
      double acc = x[r];
      for (int64_t k = r + 1; k < n; ++k) acc -= l[6 * k + r] * x[k];
      x[r] = acc / l[6 * r + r];
    }
  }
  return true;
}

// body i's U = I^A S, u = tau - friction - S^T p^A and D^-1 = (S^T U + armature)^-1 into its
// ABA row s; false if D is singular (the joint moves no mass or inertia)
inline bool articulate(const Packed& m, const double* v, const double* tau, int64_t i,
                       double* s) {
  const int64_t n = m.joint_nv(i);
  const int64_t va = m.vadr(i);
  for (int64_t k = 0; k < n; ++k) {
    const Vec6 col = column(m, i, k);
    for (int r = 0; r < 6; ++r) {
      double acc = 0.0;
      for (int c = 0; c < 6; ++c) acc += s[S_IA + 6 * r + c] * col[c];
      s[S_U + 6 * k + r] = acc;
    }
  }
  for (int64_t k = 0; k < n; ++k) {
    const Vec6 col = column(m, i, k);
    const double vk = v[va + k];
    double value = tau[va + k] - m.damping(va + k) * vk - m.friction(va + k) * sign(vk);
    for (int r = 0; r < 6; ++r) value -= col[r] * s[S_PA + r];
    s[S_UV + k] = value;
    for (int64_t kk = 0; kk < n; ++kk) {
      double acc = 0.0;
      for (int r = 0; r < 6; ++r) acc += col[r] * s[S_U + 6 * kk + r];
      s[S_DINV + 6 * k + kk] = acc;
    }
    s[S_DINV + 7 * k] += m.armature(va + k);
  }
  return invert_spd(s + S_DINV, n);
}

// add body i's articulated inertia I^a = I^A - U D^-1 U^T and bias force
// p^a = p^A + I^a c + U D^-1 u (c its bias acceleration), moved to the parent (X^T I^a X,
// X^T p^a), to the parent's ABA row
inline void fold_into_parent(const Placement& p, const double* bias_acc, int64_t n,
                             const double* s, double* parent) {
  double gain[36], ia[36], moved[36], pa[6];
  for (int64_t k = 0; k < n; ++k)
    for (int r = 0; r < 6; ++r) {
      double acc = 0.0;
      for (int64_t kk = 0; kk < n; ++kk) acc += s[S_U + 6 * kk + r] * s[S_DINV + 6 * kk + k];
      gain[6 * k + r] = acc;
    }
  for (int r = 0; r < 6; ++r)
    for (int c = 0; c < 6; ++c) {
      double acc = s[S_IA + 6 * r + c];
      for (int64_t k = 0; k < n; ++k) acc -= gain[6 * k + r] * s[S_U + 6 * k + c];
      ia[6 * r + c] = acc;
    }
  for (int r = 0; r < 6; ++r) {
    double acc = s[S_PA + r];
    for (int c = 0; c < 6; ++c) acc += ia[6 * r + c] * bias_acc[c];
    for (int64_t k = 0; k < n; ++k) acc += gain[6 * k + r] * s[S_UV + k];
    pa[r] = acc;
  }
  // X^T I^a X: X^T moves each column, then each row (I^a is symmetric)
  for (int c = 0; c < 6; ++c) {
    const Vec6 col = force_up(p, six(ia + c, 6));
    for (int r = 0; r < 6; ++r) moved[6 * r + c] = col[r];
  }
  for (int r = 0; r < 6; ++r) {
    const Vec6 turned_row = force_up(p, six(moved + 6 * r));
    for (int c = 0; c < 6; ++c) parent[S_IA + 6 * r + c] += turned_row[c];
  }
  const Vec6 force = force_up(p, six(pa));
  for (int r = 0; r < 6; ++r) parent[S_PA + r] += force[r];
}

// Articulated-body algorithm: the accelerations qdd (nv) of (q, v, tau) under fext (nforces,
// 6); STATUS_SINGULAR when a joint's articulated inertia is singular (a massless subtree)
inline int64_t aba(const Packed& m, const double* q, const double* v, const double* tau,
                   const double* fext, int64_t nforces, double* qdd) {
  struct Tag;
  struct RowsTag;
  const int64_t status = check_state(m, q, v, tau, fext, nforces);
  if (status != 0) return status;
  const int64_t nbody = m.nbody;
  double* w = new_work<Tag>(m);
  double* s = scratch<RowsTag>(ABA_COLUMNS * nbody);
  // pass 1 (root to leaves): velocities, bias accelerations c_i = v_i x S qd (in the A
  // columns), each body's spatial inertia and bias force p_i = v_i x* I v_i - f_ext_i
  for (int64_t i = 0; i < nbody; ++i) {
    joint_placement(m, q, i, w);
    const int64_t parent = m.parent(i) >= 0 ? m.parent(i) : nbody;
    const Vec6 joint_velocity = joint_motion(m, i, v);
    const Vec6 vel = plus(to_child(placement(w, i), row(w, parent, W_V)), joint_velocity);
    store(w, i, W_V, vel);
    store(w, i, W_A, cross_motion(vel, joint_velocity));
    double* si = s + ABA_COLUMNS * i;
    spatial_inertia(m.body(i) + MASS, si + S_IA);
    const Vec6 bias = inertial_force(m.body(i) + MASS, vel, ZERO6);
    for (int k = 0; k < 6; ++k) si[S_PA + k] = bias[k] - (nforces > 0 ? fext[6 * i + k] : 0.0);
  }
  // pass 2 (leaves to root): articulated inertias and bias forces
  for (int64_t i = nbody - 1; i >= 0; --i) {
    double* si = s + ABA_COLUMNS * i;
    if (!articulate(m, v, tau, i, si)) return STATUS_SINGULAR;
    const int64_t parent = m.parent(i);
    if (parent >= 0)
      fold_into_parent(placement(w, i), w + WORK_COLUMNS * i + W_A, m.joint_nv(i), si,
                       s + ABA_COLUMNS * parent);
  }
  // pass 3 (root to leaves): a' = X a_parent + c ; qdd = D^-1 (u - U^T a') ; a = a' + S qdd,
  // the body accelerations in the F columns; the world row holds -gravity in A
  for (int64_t i = 0; i < nbody; ++i) {
    const double* si = s + ABA_COLUMNS * i;
    const int64_t n = m.joint_nv(i);
    const int64_t va = m.vadr(i);
    const int64_t parent = m.parent(i);
    const Vec6 parent_acc = parent >= 0 ? row(w, parent, W_F) : row(w, nbody, W_A);
    const Vec6 acc = plus(to_child(placement(w, i), parent_acc), row(w, i, W_A));
    double rhs[6];
    for (int64_t k = 0; k < n; ++k) {
      double value = si[S_UV + k];
      for (int c = 0; c < 6; ++c) value -= si[S_U + 6 * k + c] * acc[c];
      rhs[k] = value;
    }
    for (int64_t k = 0; k < n; ++k) {
      double value = 0.0;
      for (int64_t kk = 0; kk < n; ++kk) value += si[S_DINV + 6 * k + kk] * rhs[kk];
      qdd[va + k] = value;
    }
    store(w, i, W_F, plus(acc, joint_motion(m, i, qdd)));
  }
  return status_of_result(qdd, m.nv);
}

// each body's world placement (count, 12) of bodies 0..count-1 into world, the joint
// placements into w; with `from_roots`, each tree's placements in the frame of its root body
// instead: what does not depend on where a tree is (the Coriolis matrix) then does not read
// its root joint, whose placement's rounding does not enter
inline void world_placements(const Packed& m, int64_t count, const double* q, double* w,
                             double* world, bool from_roots) {
  for (int64_t i = 0; i < count; ++i) {
    joint_placement(m, q, i, w);
    double* out = world + 12 * i;
    const int64_t parent = m.parent(i);
    if (parent < 0) {
      const double* source = from_roots ? IDENTITY_PLACEMENT.data() : w + WORK_COLUMNS * i;
      std::copy(source, source + 12, out);
      continue;
    }
    const double* up = world + 12 * parent;
    const double* joint = w + WORK_COLUMNS * i;
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b)
        out[3 * a + b] = up[3 * a] * joint[b] + up[3 * a + 1] * joint[3 + b] +
                         up[3 * a + 2] * joint[6 + b];
      out[9 + a] = up[9 + a] + up[3 * a] * joint[W_P] + up[3 * a + 1] * joint[W_P + 1] +
                   up[3 * a + 2] * joint[W_P + 2];
    }
  }
}

// the world placements of every body, (nbody, 12) rotation then origin, into world
inline int64_t forward_kinematics(const Packed& m, const double* q, double* world) {
  struct Tag;
  if (!all_finite(q, m.nq)) return 1;
  world_placements(m, m.nbody, q, new_work<Tag>(m), world, false);
  return status_of_result(world, 12 * m.nbody);
}

}  // namespace invdyn
