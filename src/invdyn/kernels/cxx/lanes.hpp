// The batched RNEA, LANES states at a time: every per-body step is one loop over the lanes that
// the compiler turns into SIMD instructions. A lane array holds LANES states side by side, its
// entry (row, col) of state `lane` at [(row * cols + col) * LANES + lane]; each loop over the
// lanes reads other arrays (or other columns) than it writes, so that it vectorises.
#pragma once

#include "dynamics.hpp"

namespace invdyn {

// states per block: a multiple of 8 doubles, the widest vectors
constexpr int LANES = 16;

// the helpers of the lane loops, always inlined: each clone of rnea_lanes then compiles them
// for its own instruction set, where GCC would call one baseline copy of the larger ones
#if defined(__GNUC__)
#define INVDYN_LANE_INLINE inline __attribute__((always_inline))
#else
#define INVDYN_LANE_INLINE inline
#endif

// sine and cosine by polynomials (fdlibm's kernels) after Cody-Waite reduction by pi/2: no
// branches, so a loop over them vectorises; within about 2e-16 of the exact values below
// SIN_COS_RANGE, beyond which the library functions take over
constexpr double SIN_COS_RANGE = 1e5;
constexpr double TWO_OVER_PI = 6.36619772367581382433e-01;
// pi / 2 in three parts of 33 bits each, so that k times each is exact for |k| < 2**20
constexpr double PIO2[3] = {1.57079632673412561417e00, 6.07710050630396597660e-11,
                            2.02226624871116645580e-21};
constexpr double SIN_KERNEL[6] = {-1.66666666666666324348e-01, 8.33333333332248946124e-03,
                                  -1.98412698298579493134e-04, 2.75573137070700676789e-06,
                                  -2.50507602534068634195e-08, 1.58969099521155010221e-10};
constexpr double COS_KERNEL[6] = {4.16666666666666019037e-02,  -1.38888888888741095749e-03,
                                  2.48015872894767294178e-05,  -2.75573143513906633035e-07,
                                  2.08757232129817482790e-09,  -1.13596475577881948265e-11};

// c[0] + z (c[1] + z (... + z c[5]))
INVDYN_LANE_INLINE double polynomial(const double (&c)[6], double z) {
  double p = c[5];
  for (int k = 4; k >= 0; --k) p = c[k] + z * p;
  return p;
}

// (sin x, cos x), branch free, for |x| below SIN_COS_RANGE; NaN for non-finite x
INVDYN_LANE_INLINE std::array<double, 2> sin_cos(double x) {
  // x = k pi/2 + r with |r| <= pi/4
  const double k = std::rint(x * TWO_OVER_PI);
  const double r = ((x - k * PIO2[0]) - k * PIO2[1]) - k * PIO2[2];
  const double z = r * r;
  const double s = r + r * z * polynomial(SIN_KERNEL, z);
  const double c = 1.0 - 0.5 * z + z * z * polynomial(COS_KERNEL, z);
  // the quadrant k mod 4 picks and signs them: an int (a vector conversion at every x86-64
  // level), 0 for NaN and beyond SIN_COS_RANGE, where the library's values replace these
  const int quadrant = static_cast<int>(std::fabs(x) <= SIN_COS_RANGE ? k : 0.0) & 3;
  const double sine = quadrant & 1 ? c : s, cosine = quadrant & 1 ? s : c;
  return {quadrant & 2 ? -sine : sine, (quadrant + 1) & 2 ? -cosine : cosine};
}

// the lanes of column `col` of row `row` of a lane array of `cols` columns
INVDYN_LANE_INLINE double* lanes(double* x, int64_t row, int64_t cols, int64_t col) {
  return x + (row * cols + col) * LANES;
}
INVDYN_LANE_INLINE const double* lanes(const double* x, int64_t row, int64_t cols, int64_t col) {
  return x + (row * cols + col) * LANES;
}

// the N values x[0], x[step], ..., x[(N - 1) step]
template <size_t N>
INVDYN_LANE_INLINE std::array<double, N> take(const double* x, int64_t step = 1) {
  std::array<double, N> out;
  for (size_t k = 0; k < N; ++k) out[k] = x[k * step];
  return out;
}

// one lane of N consecutive columns of a lane array, and its update
template <size_t N>
INVDYN_LANE_INLINE std::array<double, N> lane_values(const double* x) {
  return take<N>(x, LANES);
}
template <size_t N>
INVDYN_LANE_INLINE void put_lane(double* x, const std::array<double, N>& values) {
  for (size_t k = 0; k < N; ++k) x[k * LANES] = values[k];
}

// joint_coordinates of one lane of q (nq, LANES)
INVDYN_LANE_INLINE std::array<double, 7> lane_coordinates(const double* q, int64_t nq,
                                                          int64_t qa) {
  std::array<double, 7> x;
  for (int64_t k = 0; k < 7; ++k) x[k] = q[std::min(qa + k, nq - 1) * LANES];
  return x;
}

// cosine and sine of each revolute and continuous joint's angle in the lane configurations q
// (nq, LANES), into cs (nbody, 2, LANES): a body's cosines, then its sines
INVDYN_LANE_INLINE void lane_angles(const Packed& m, const double* __restrict q,
                                    double* __restrict cs) {
  for (int64_t i = 0; i < m.nbody; ++i) {
    const double* angle = lanes(q, m.qadr(i), 1, 0);
    double* cosine = lanes(cs, i, 2, 0);
    double* sine = lanes(cs, i, 2, 1);
    if (m.type(i) == REVOLUTE) {
      for (int lane = 0; lane < LANES; ++lane) {
        const auto sc = sin_cos(angle[lane]);
        sine[lane] = sc[0], cosine[lane] = sc[1];
      }
      // angles beyond SIN_COS_RANGE: the library functions
      for (int lane = 0; lane < LANES; ++lane)
        if (std::fabs(angle[lane]) > SIN_COS_RANGE)
          cosine[lane] = std::cos(angle[lane]), sine[lane] = std::sin(angle[lane]);
    } else if (m.type(i) == CONTINUOUS) {
      for (int lane = 0; lane < LANES; ++lane) {
        const auto pair = unit_pair(angle[lane], angle[LANES + lane]);
        cosine[lane] = pair[0], sine[lane] = pair[1];
      }
    }
  }
}

// the placements of body i, of `frame` (axis, rotation, origin), in every lane, its joint of
// type Type about the coordinate axis Axis: a loop whose body has no branch on them
template <int64_t Type, int64_t Axis>
INVDYN_LANE_INLINE void lane_placements(const Packed& m, int64_t i, const double* __restrict q,
                                        const double* __restrict cs,
                                        const double* __restrict frame, double* __restrict w) {
  const int64_t nq = m.nq, qa = m.qadr(i);
  const double* cosine = lanes(cs, i, 2, 0);
  const double* sine = lanes(cs, i, 2, 1);
  double* out = lanes(w, i, WORK_COLUMNS, W_R);
  for (int lane = 0; lane < LANES; ++lane) {
    const auto x = lane_coordinates(q + lane, nq, qa);
    put_lane(out + lane, moved_placement(Type, Axis, cosine[lane], sine[lane], x, frame));
  }
}

// joint_placement in every lane: q (nq, LANES), cs of lane_angles, w (nbody + 1,
// WORK_COLUMNS, LANES)
INVDYN_LANE_INLINE void lane_joint_placement(const Packed& m, int64_t i, const double* q,
                                             const double* cs, double* w) {
  const int64_t type = m.type(i);
  // the joint frame, copied: the loops then see that it aliases no lane array
  const auto frame_values = take<15>(m.body(i));
  const double* frame = frame_values.data();
  if (type == PRISMATIC) return lane_placements<PRISMATIC, -1>(m, i, q, cs, frame, w);
  if (type == SPHERICAL) return lane_placements<SPHERICAL, -1>(m, i, q, cs, frame, w);
  if (type == FREE) return lane_placements<FREE, -1>(m, i, q, cs, frame, w);
  // revolute and continuous joints
  switch (m.aligned_axis(i)) {
    case 0: return lane_placements<REVOLUTE, 0>(m, i, q, cs, frame, w);
    case 1: return lane_placements<REVOLUTE, 1>(m, i, q, cs, frame, w);
    case 2: return lane_placements<REVOLUTE, 2>(m, i, q, cs, frame, w);
    default: return lane_placements<REVOLUTE, -1>(m, i, q, cs, frame, w);
  }
}

// joint_motion in every lane: S x of x (nv, LANES) into out (6, LANES)
INVDYN_LANE_INLINE void lane_joint_motion(const Packed& m, int64_t i, const double* __restrict x,
                                          double* __restrict out) {
  const int64_t type = m.type(i);
  const double* joint = lanes(x, m.vadr(i), 1, 0);
  if (type == FREE) {
    // [linear, angular] in v, [angular; linear] in spatial motion
    std::copy_n(joint + 3 * LANES, 3 * LANES, out);
    std::copy_n(joint, 3 * LANES, out + 3 * LANES);
    return;
  }
  if (type == SPHERICAL) {
    std::copy_n(joint, 3 * LANES, out);
    std::fill_n(out + 3 * LANES, 3 * LANES, 0.0);
    return;
  }
  // an axis of rotation fills the angular rows, of translation the linear ones
  const auto axis = take<3>(m.body(i) + AXIS);
  const bool slides = type == PRISMATIC;
  for (int lane = 0; lane < LANES; ++lane) {
    const double d = joint[lane];
    put_lane(out + lane, slides ? Vec6{0.0, 0.0, 0.0, axis[0] * d, axis[1] * d, axis[2] * d}
                                : Vec6{axis[0] * d, axis[1] * d, axis[2] * d, 0.0, 0.0, 0.0});
  }
}

// joint_force in every lane: S^T f of body i's force in w into tau (nv, LANES)
INVDYN_LANE_INLINE void lane_joint_force(const Packed& m, int64_t i, const double* __restrict w,
                                         double* __restrict tau) {
  const int64_t type = m.type(i);
  const double* f = lanes(w, i, WORK_COLUMNS, W_F);
  double* out = lanes(tau, m.vadr(i), 1, 0);
  if (type == SPHERICAL) {
    std::copy_n(f, 3 * LANES, out);
    return;
  }
  if (type == FREE) {
    std::copy_n(f + 3 * LANES, 3 * LANES, out);
    std::copy_n(f, 3 * LANES, out + 3 * LANES);
    return;
  }
  // the moment about a turning axis, the force along a sliding one
  const auto axis = take<3>(m.body(i) + AXIS);
  const double* along = f + (type == PRISMATIC ? 3 * LANES : 0);
  for (int lane = 0; lane < LANES; ++lane)
    out[lane] = axis[0] * along[lane] + axis[1] * along[LANES + lane] +
                axis[2] * along[2 * LANES + lane];
}

// the rows of the lane array (4, 6, LANES) of a body's joint motions and its parent's
constexpr int JOINT_V = 0, JOINT_A = 6 * LANES, PARENT_V = 12 * LANES, PARENT_A = 18 * LANES;

// velocities, accelerations and inertial forces in every lane of the body of `inertia` (as in
// inertia_product) whose row of w starts at `body`, from its placement there and the motions:
// the loop of forward_pass over the lanes
INVDYN_LANE_INLINE void lane_body_motion(const double* __restrict inertia,
                                         const double* __restrict motions,
                                         double* __restrict body) {
  for (int lane = 0; lane < LANES; ++lane) {
    const Placement p = lane_values<12>(body + W_R * LANES + lane);
    const double* motion = motions + lane;
    // v_i = X v_parent + S qd
    const Vec6 joint_velocity = lane_values<6>(motion + JOINT_V);
    const Vec6 vel = plus(to_child(p, lane_values<6>(motion + PARENT_V)), joint_velocity);
    // a_i = X a_parent + S qdd + v_i x S qd
    const Vec6 joint_acceleration = lane_values<6>(motion + JOINT_A);
    Vec6 acc = plus(to_child(p, lane_values<6>(motion + PARENT_A)), joint_acceleration);
    acc = plus(acc, cross_motion(vel, joint_velocity));
    // f_i = I a_i + v_i x* I v_i
    put_lane(body + W_V * LANES + lane, vel);
    put_lane(body + W_A * LANES + lane, acc);
    put_lane(body + W_F * LANES + lane, inertial_force(inertia, vel, acc));
  }
}

// forward_pass of LANES states at once: q (nq, LANES), v, a (nv, LANES), w (nbody + 1,
// WORK_COLUMNS, LANES) with its world row set; angles (nbody, 2, LANES) and motions (4, 6,
// LANES) rewritten
INVDYN_LANE_INLINE void lane_forward_pass(const Packed& m, const double* q, const double* v,
                                          const double* a, double* w, double* angles,
                                          double* motions) {
  lane_angles(m, q, angles);
  for (int64_t i = 0; i < m.nbody; ++i) {
    lane_joint_placement(m, i, q, angles, w);
    lane_joint_motion(m, i, v, motions + JOINT_V);
    lane_joint_motion(m, i, a, motions + JOINT_A);
    // the parent's motions, copied out of w, which the body's loop writes
    const int64_t parent = m.parent(i) >= 0 ? m.parent(i) : m.nbody;
    std::copy_n(lanes(w, parent, WORK_COLUMNS, W_V), 6 * LANES, motions + PARENT_V);
    std::copy_n(lanes(w, parent, WORK_COLUMNS, W_A), 6 * LANES, motions + PARENT_A);
    const auto inertia = take<13>(m.body(i) + MASS);
    lane_body_motion(inertia.data(), motions, lanes(w, i, WORK_COLUMNS, 0));
  }
}

// the backward pass of rnea in every lane: tau_i = S^T f_i, then f_i to the parent; tau (nv,
// LANES), w as in lane_forward_pass, force (6, LANES) rewritten
INVDYN_LANE_INLINE void lane_backward_pass(const Packed& m, double* w, double* tau,
                                           double* __restrict force) {
  for (int64_t i = m.nbody - 1; i >= 0; --i) {
    lane_joint_force(m, i, w, tau);
    const int64_t parent = m.parent(i);
    if (parent < 0) continue;
    const double* body = lanes(w, i, WORK_COLUMNS, 0);
    for (int lane = 0; lane < LANES; ++lane) {
      const Vec6 f = lane_values<6>(body + W_F * LANES + lane);
      put_lane(force + lane, force_up(lane_values<12>(body + W_R * LANES + lane), f));
    }
    double* parent_force = lanes(w, parent, WORK_COLUMNS, W_F);
    for (int k = 0; k < 6 * LANES; ++k) parent_force[k] += force[k];
  }
}

// a lane work array (nbody + 1, WORK_COLUMNS, LANES) whose last row is the world: at rest,
// accelerating against gravity
template <typename Tag>
inline double* new_lane_work(const Packed& m) {
  double* w = scratch<Tag>(WORK_COLUMNS * LANES * (m.nbody + 1));
  double* world = lanes(w, m.nbody, WORK_COLUMNS, 0);
  std::fill_n(world, WORK_COLUMNS * LANES, 0.0);
  for (int k = 0; k < 3; ++k)
    std::fill_n(world + (W_A + 3 + k) * LANES, LANES, -m.gravity()[k]);
  return w;
}

// the n values of state b of x (B, n) into column `lane` of the lane array to (n, LANES)
inline void to_lane(const double* x, int64_t n, int64_t b, int lane, double* to) {
  for (int64_t k = 0; k < n; ++k) to[k * LANES + lane] = x[b * n + k];
}

// the (nforces, 6) external forces of state b of fext (fext_states, nforces, 6), where one set
// stands for every state
inline const double* state_forces(const double* fext, int64_t fext_states, int64_t nforces,
                                  int64_t b) {
  return fext_states == 1 ? fext : fext + b * nforces * 6;
}

// rnea of states start..stop of q (B, nq), v, a (B, nv) under fext (fext_states, nforces, 6)
// into tau (B, nv), LANES at a time; the worst status
INVDYN_SIMD_CLONES
inline int64_t rnea_lanes(const Packed& m, const double* q, const double* v, const double* a,
                          const double* fext, int64_t fext_states, int64_t nforces,
                          double* tau, int64_t start, int64_t stop) {
  struct WorkTag;
  struct AnglesTag;
  struct MotionsTag;
  struct StateTag;
  const int64_t nbody = m.nbody, nq = m.nq, nv = m.nv;
  double* w = new_lane_work<WorkTag>(m);
  double* angles = scratch<AnglesTag>(2 * nbody * LANES);
  double* motions = scratch<MotionsTag>(4 * 6 * LANES);
  double* lane_q = scratch<StateTag>((nq + 3 * nv) * LANES);
  double* lane_v = lane_q + nq * LANES;
  double* lane_a = lane_v + nv * LANES;
  double* lane_tau = lane_a + nv * LANES;
  int64_t status = 0;
  for (int64_t first = start; first < stop; first += LANES) {
    // a block of states into the lanes, a short block repeating its last state
    const int64_t count = std::min<int64_t>(LANES, stop - first);
    for (int lane = 0; lane < LANES; ++lane) {
      const int64_t b = first + std::min<int64_t>(lane, count - 1);
      to_lane(q, nq, b, lane, lane_q);
      to_lane(v, nv, b, lane, lane_v);
      to_lane(a, nv, b, lane, lane_a);
    }
    lane_forward_pass(m, lane_q, lane_v, lane_a, w, angles, motions);
    // f_i = I a_i + v_i x* I v_i - f_ext_i
    for (int64_t lane = 0; lane < count; ++lane) {
      const double* forces = state_forces(fext, fext_states, nforces, first + lane);
      for (int64_t i = 0; i < nforces; ++i)
        for (int k = 0; k < 6; ++k) lanes(w, i, WORK_COLUMNS, W_F + k)[lane] -= forces[6 * i + k];
    }
    lane_backward_pass(m, w, lane_tau, motions);
    // each state's joint forces out of the lanes, its joint terms added, its status kept
    for (int64_t lane = 0; lane < count; ++lane) {
      const int64_t b = first + lane;
      for (int64_t k = 0; k < nv; ++k) tau[b * nv + k] = lane_tau[k * LANES + lane];
      add_joint_terms(m, v + b * nv, a + b * nv, tau + b * nv);
      const double* forces = state_forces(fext, fext_states, nforces, b);
      status = std::max(status, rnea_status(m, q + b * nq, v + b * nv, a + b * nv, forces,
                                            nforces, tau + b * nv));
    }
  }
  return status;
}

}  // namespace invdyn
