// The packed model that every kernel reads, the work array of per-body state, and statuses.
//
// `invdyn.model.Model.kernel_data` packs a Model into two C-contiguous arrays:
//   ints (nbody, 5): parent, joint type, first index in q, first index in v, and the
//     coordinate axis (0, 1, 2) a revolute joint turns about, or -1 for any other axis;
//   reals (nbody + nv + 1, 28): per body, the joint axis (3), joint rotation in the parent,
//     row-major (9), joint origin in the parent (3), mass (1), first mass moment m c (3) and
//     rotational inertia about the body origin, row-major (9), in body coordinates; then per
//     dof its armature, viscous and Coulomb friction; then a last row with gravity (3), nq and
//     whether any joint term is non-zero.
// Spatial vectors are [angular; linear]. A kernel returns a status: 0 when every input was
// finite, else the position of the first non-finite argument (1 for q, ...), STATUS_OVERFLOW
// when finite inputs gave a non-finite result, STATUS_SINGULAR when forward dynamics met a joint
// that moves no mass.
#pragma once

#include <cmath>
#include <cstdint>

namespace invdyn {

// joint type codes, as in invdyn.model.JointType
enum JointType : int64_t { REVOLUTE = 0, CONTINUOUS = 1, PRISMATIC = 2, SPHERICAL = 3, FREE = 4 };

// statuses beyond the argument positions
constexpr int64_t STATUS_SINGULAR = 5;
constexpr int64_t STATUS_OVERFLOW = 6;

// columns of a packed body row
constexpr int AXIS = 0, ROT = 3, POS = 12, MASS = 15, MOMENT = 16, INERTIA = 19;
constexpr int REAL_COLUMNS = 28;
constexpr int INT_COLUMNS = 5;

// columns of the work array (nbody + 1, WORK_COLUMNS), the last row being the world: rotation
// to the parent (9), origin in the parent (3), velocity (6), acceleration (6), force (6)
constexpr int W_R = 0, W_P = 9, W_V = 12, W_A = 18, W_F = 24;
constexpr int WORK_COLUMNS = 30;

// a function compiled once per x86-64 level (AVX-512, AVX2 with FMA, baseline) and picked at
// load time for the processor at hand, where the toolchain can (GCC on Linux): for the loops
// over SIMD lanes, which the compiler vectorises to the widest registers there are, and the
// long straight-line arithmetic of the derivatives
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 && defined(__x86_64__) && \
    defined(__GLIBC__)
#define INVDYN_SIMD_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define INVDYN_SIMD_CLONES
#endif

// the coordinates of a frame Jacobian, as Pinocchio's ReferenceFrame
constexpr int64_t JACOBIAN_LOCAL = 0, JACOBIAN_WORLD = 1, JACOBIAN_LOCAL_WORLD_ALIGNED = 2;

struct Packed {
  const int64_t* ints = nullptr;
  const double* reals = nullptr;
  int64_t nbody = 0;
  int64_t nv = 0;
  int64_t nq = 0;

  Packed() = default;
  // ints (nbody, INT_COLUMNS) and reals (real_rows, REAL_COLUMNS), real_rows > nbody, whose
  // values `valid` has checked
  Packed(const int64_t* ints_, const double* reals_, int64_t nbody_, int64_t real_rows)
      : ints(ints_), reals(reals_), nbody(nbody_), nv(real_rows - nbody_ - 1),
        nq(static_cast<int64_t>(reals_[REAL_COLUMNS * (real_rows - 1) + 3])) {}

  int64_t parent(int64_t i) const { return ints[INT_COLUMNS * i]; }
  int64_t type(int64_t i) const { return ints[INT_COLUMNS * i + 1]; }
  int64_t qadr(int64_t i) const { return ints[INT_COLUMNS * i + 2]; }
  int64_t vadr(int64_t i) const { return ints[INT_COLUMNS * i + 3]; }
  int64_t aligned_axis(int64_t i) const { return ints[INT_COLUMNS * i + 4]; }
  // the number of velocity coordinates of body i's joint
  int64_t joint_nv(int64_t i) const {
    const int64_t t = type(i);
    return t == SPHERICAL ? 3 : (t == FREE ? 6 : 1);
  }
  const double* body(int64_t i) const { return reals + REAL_COLUMNS * i; }
  // armature, viscous and Coulomb friction of dof k
  double armature(int64_t k) const { return reals[REAL_COLUMNS * (nbody + k)]; }
  double damping(int64_t k) const { return reals[REAL_COLUMNS * (nbody + k) + 1]; }
  double friction(int64_t k) const { return reals[REAL_COLUMNS * (nbody + k) + 2]; }
  const double* gravity() const { return reals + REAL_COLUMNS * (nbody + nv); }
  bool has_joint_terms() const { return reals[REAL_COLUMNS * (nbody + nv) + 4] != 0.0; }
};

// whether packed arrays of these shapes hold a model the kernels can read without reading or
// writing outside their arguments: parents before children, known joint types and axes, each
// joint's coordinates following the previous joint's and filling q (nq) and v (nv)
inline bool valid(const int64_t* ints, const double* reals, int64_t nbody, int64_t real_rows) {
  const double nq = reals[REAL_COLUMNS * (real_rows - 1) + 3];
  if (!(nq >= 0.0 && nq <= 1e9 && nq == std::floor(nq))) return false;
  const Packed m(ints, reals, nbody, real_rows);
  int64_t qadr = 0, vadr = 0;
  for (int64_t i = 0; i < nbody; ++i) {
    const int64_t type = m.type(i);
    if (m.parent(i) < -1 || m.parent(i) >= i || type < REVOLUTE || type > FREE) return false;
    if (m.aligned_axis(i) < -1 || m.aligned_axis(i) > 2) return false;
    if (m.qadr(i) != qadr || m.vadr(i) != vadr) return false;
    qadr += type == FREE ? 7 : (type == SPHERICAL ? 4 : (type == CONTINUOUS ? 2 : 1));
    vadr += m.joint_nv(i);
  }
  return qadr == m.nq && vadr == m.nv;
}

inline double sign(double x) { return x > 0.0 ? 1.0 : (x < 0.0 ? -1.0 : x); }

// 0 when every entry of x (n) is finite, else STATUS_OVERFLOW
inline int64_t status_of_result(const double* x, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    if (!std::isfinite(x[k])) return STATUS_OVERFLOW;
  return 0;
}

inline bool all_finite(const double* x, int64_t n) {
  for (int64_t k = 0; k < n; ++k)
    if (!std::isfinite(x[k])) return false;
  return true;
}

// 0 when q (nq), v, a (nv) and fext (nforces, 6) are finite, else the position of the first
// non-finite one
inline int64_t check_state(const Packed& m, const double* q, const double* v, const double* a,
                           const double* fext, int64_t nforces) {
  if (!all_finite(q, m.nq)) return 1;
  if (!all_finite(v, m.nv)) return 2;
  if (!all_finite(a, m.nv)) return 3;
  if (!all_finite(fext, 6 * nforces)) return 4;
  return 0;
}

}  // namespace invdyn
