// Small spatial-algebra steps on values: joint placements, motion and force transforms, cross
// products and inertial forces, each computed in registers. Spatial vectors are [angular;
// linear]; a placement is a rotation (9, row-major) then an origin (3), of a body in its parent.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>

#include "packed.hpp"

namespace invdyn {

using Vec3 = std::array<double, 3>;
using Vec6 = std::array<double, 6>;
using Rot = std::array<double, 9>;
using Placement = std::array<double, 12>;

constexpr Vec6 ZERO6 = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
constexpr Placement IDENTITY_PLACEMENT = {1.0, 0.0, 0.0, 0.0, 1.0, 0.0,
                                          0.0, 0.0, 1.0, 0.0, 0.0, 0.0};

inline Vec6 plus(const Vec6& m, const Vec6& n) {
  return {m[0] + n[0], m[1] + n[1], m[2] + n[2], m[3] + n[3], m[4] + n[4], m[5] + n[5]};
}

inline Vec3 plus(const Vec3& x, const Vec3& y) { return {x[0] + y[0], x[1] + y[1], x[2] + y[2]}; }

inline Vec3 cross(const Vec3& x, const Vec3& y) {
  return {x[1] * y[2] - x[2] * y[1], x[2] * y[0] - x[0] * y[2], x[0] * y[1] - x[1] * y[0]};
}

// R x for the rotation r (9, row-major)
inline Vec3 turn(const double* r, const Vec3& x) {
  return {r[0] * x[0] + r[1] * x[1] + r[2] * x[2], r[3] * x[0] + r[4] * x[1] + r[5] * x[2],
          r[6] * x[0] + r[7] * x[1] + r[8] * x[2]};
}

// R^T x for the rotation r (9, row-major)
inline Vec3 turn_back(const double* r, const Vec3& x) {
  return {r[0] * x[0] + r[3] * x[1] + r[6] * x[2], r[1] * x[0] + r[4] * x[1] + r[7] * x[2],
          r[2] * x[0] + r[5] * x[1] + r[8] * x[2]};
}

// the 6 values x[0], x[step], ..., x[5 step]
inline Vec6 six(const double* x, int step = 1) {
  return {x[0], x[step], x[2 * step], x[3 * step], x[4 * step], x[5 * step]};
}

inline void put(double* out, const Vec6& m) { std::copy(m.begin(), m.end(), out); }

// row i, columns col..col+5 of the work array w (row stride WORK_COLUMNS)
inline Vec6 row(const double* w, int64_t i, int col) { return six(w + WORK_COLUMNS * i + col); }
inline void store(double* w, int64_t i, int col, const Vec6& m) {
  put(w + WORK_COLUMNS * i + col, m);
}
// the placement of the 12 values at `values`
inline Placement placement_at(const double* values) {
  Placement p;
  std::copy(values, values + 12, p.begin());
  return p;
}
// body i's placement in its parent, from the work array w
inline Placement placement(const double* w, int64_t i) {
  return placement_at(w + WORK_COLUMNS * i);
}

// the rotation by the angle of cosine c and sine s about the unit axis (ux, uy, uz)
inline Rot axis_rotation(double ux, double uy, double uz, double c, double s) {
  const double t = 1.0 - c;
  return {c + t * ux * ux,      t * ux * uy - s * uz, t * ux * uz + s * uy,
          t * ux * uy + s * uz, c + t * uy * uy,      t * uy * uz - s * ux,
          t * ux * uz - s * uy, t * uy * uz + s * ux, c + t * uz * uz};
}

// the rotation of the quaternion [x, y, z, w] of any norm: that of the unit quaternion along
// it, none for a zero quaternion (a NaN stays NaN, for the caller's check of the result)
inline Rot quaternion_rotation(double x, double y, double z, double w) {
  const double n = x * x + y * y + z * z + w * w;
  const double t = n == 0.0 ? 0.0 : 2.0 / n;
  return {1 - t * (y * y + z * z), t * (x * y - z * w),     t * (x * z + y * w),
          t * (x * y + z * w),     1 - t * (x * x + z * z), t * (y * z - x * w),
          t * (x * z - y * w),     t * (y * z + x * w),     1 - t * (x * x + y * y)};
}

// the (cos, sin) pair of the angle that (c, s), of any norm, points to; (1, 0) for (0, 0)
inline std::array<double, 2> unit_pair(double c, double s) {
  const double n = c * c + s * s;
  if (n == 0.0) return {1.0, 0.0};
  const double r = 1.0 / std::sqrt(n);
  return {c * r, s * r};
}

// the 7 values q[qa..qa+6], an index past the end of q (nq) reading its last entry: the
// coordinates of a joint of any type, read without a branch on its type
inline std::array<double, 7> joint_coordinates(const double* q, int64_t nq, int64_t qa) {
  const int64_t last = nq - 1;
  std::array<double, 7> x;
  for (int64_t k = 0; k < 7; ++k) x[k] = q[std::min(qa + k, last)];
  return x;
}

// cosine and sine of a revolute (x[0]) or continuous joint's angle (x[0], x[1] of any norm);
// (1, 0) for any other joint
inline std::array<double, 2> joint_cos_sin(int64_t type, const std::array<double, 7>& x) {
  if (type == REVOLUTE) return {std::cos(x[0]), std::sin(x[0])};
  if (type == CONTINUOUS) return unit_pair(x[0], x[1]);
  return {1.0, 0.0};
}

// the placement of a joint of `frame` (axis 3, rotation 9, origin 3) moved by the rotation rj
// and the translation pj: R = R0 rj, p = p0 + R0 pj
inline Placement compose(const double* frame, const Rot& rj, const Vec3& pj) {
  Placement out;
  for (int r = 0; r < 3; ++r) {
    const double a0 = frame[3 + 3 * r], a1 = frame[4 + 3 * r], a2 = frame[5 + 3 * r];
    out[3 * r] = a0 * rj[0] + a1 * rj[3] + a2 * rj[6];
    out[3 * r + 1] = a0 * rj[1] + a1 * rj[4] + a2 * rj[7];
    out[3 * r + 2] = a0 * rj[2] + a1 * rj[5] + a2 * rj[8];
    out[9 + r] = frame[12 + r] + a0 * pj[0] + a1 * pj[1] + a2 * pj[2];
  }
  return out;
}

// the placement of a revolute joint of `frame` about the coordinate axis e_k turned by the
// angle of cosine c and sine s: columns a = k + 1 and b = k + 2 (mod 3) of the rotation become
// c a + s b and c b - s a, column k and the origin stay
inline Placement turned(const double* frame, int64_t k, double c, double s) {
  Placement out;
  for (int r = 0; r < 3; ++r) {
    const double r0 = frame[3 + 3 * r], r1 = frame[4 + 3 * r], r2 = frame[5 + 3 * r];
    double* o = out.data() + 3 * r;
    if (k == 0) {
      o[0] = r0, o[1] = c * r1 + s * r2, o[2] = c * r2 - s * r1;
    } else if (k == 1) {
      o[0] = c * r0 - s * r2, o[1] = r1, o[2] = c * r2 + s * r0;
    } else {
      o[0] = c * r0 + s * r1, o[1] = c * r1 - s * r0, o[2] = r2;
    }
  }
  out[9] = frame[12], out[10] = frame[13], out[11] = frame[14];
  return out;
}

// a body's placement in its parent from its joint's type, coordinate axis k, the cosine c and
// sine s of its angle (revolute and continuous joints), its coordinates x and its `frame`
inline Placement moved_placement(int64_t type, int64_t k, double c, double s,
                                 const std::array<double, 7>& x, const double* frame) {
  if (type == REVOLUTE || type == CONTINUOUS) {
    if (k >= 0) return turned(frame, k, c, s);
    return compose(frame, axis_rotation(frame[0], frame[1], frame[2], c, s), {0.0, 0.0, 0.0});
  }
  if (type == PRISMATIC) {
    const double d = x[0];
    return compose(frame, {1, 0, 0, 0, 1, 0, 0, 0, 1}, {frame[0] * d, frame[1] * d, frame[2] * d});
  }
  if (type == SPHERICAL) return compose(frame, quaternion_rotation(x[0], x[1], x[2], x[3]), {});
  // free flyer: translation, then quaternion
  return compose(frame, quaternion_rotation(x[3], x[4], x[5], x[6]), {x[0], x[1], x[2]});
}

// write body i's placement in its parent at configuration q into w[i, 0:12]
inline void joint_placement(const Packed& m, const double* q, int64_t i, double* w) {
  const int64_t type = m.type(i);
  const auto x = joint_coordinates(q, m.nq, m.qadr(i));
  const auto cs = joint_cos_sin(type, x);
  const Placement p = moved_placement(type, m.aligned_axis(i), cs[0], cs[1], x, m.body(i));
  std::copy(p.begin(), p.end(), w + WORK_COLUMNS * i);
}

// column k of joint i's motion subspace S, in body coordinates
inline Vec6 column(const Packed& m, int64_t i, int64_t k) {
  const int64_t type = m.type(i);
  const double* u = m.body(i) + AXIS;
  if (type == REVOLUTE || type == CONTINUOUS) return {u[0], u[1], u[2], 0.0, 0.0, 0.0};
  if (type == PRISMATIC) return {0.0, 0.0, 0.0, u[0], u[1], u[2]};
  Vec6 out = ZERO6;
  // a ball turns about the body axes; a free flyer's linear coordinates come first
  if (type == SPHERICAL) out[k] = 1.0;
  else out[k < 3 ? k + 3 : k - 3] = 1.0;
  return out;
}

// S x_i: the spatial motion of joint i's velocity coordinates in x (nv)
inline Vec6 joint_motion(const Packed& m, int64_t i, const double* x) {
  const int64_t type = m.type(i);
  const int64_t va = m.vadr(i);
  const double* u = m.body(i) + AXIS;
  if (type == REVOLUTE || type == CONTINUOUS) {
    const double d = x[va];
    return {u[0] * d, u[1] * d, u[2] * d, 0.0, 0.0, 0.0};
  }
  if (type == PRISMATIC) {
    const double d = x[va];
    return {0.0, 0.0, 0.0, u[0] * d, u[1] * d, u[2] * d};
  }
  if (type == SPHERICAL) return {x[va], x[va + 1], x[va + 2], 0.0, 0.0, 0.0};
  return {x[va + 3], x[va + 4], x[va + 5], x[va], x[va + 1], x[va + 2]};
}

// S_jk^T f: the force of column k of joint j from the spatial force f
inline double project(const Packed& m, int64_t j, int64_t k, const Vec6& f) {
  const int64_t type = m.type(j);
  const double* u = m.body(j) + AXIS;
  if (type == REVOLUTE || type == CONTINUOUS) return u[0] * f[0] + u[1] * f[1] + u[2] * f[2];
  if (type == PRISMATIC) return u[0] * f[3] + u[1] * f[4] + u[2] * f[5];
  if (type == SPHERICAL) return f[k];
  return k < 3 ? f[3 + k] : f[k - 3];
}

// write S^T f, the joint forces of body i's spatial force f, into tau (nv)
inline void joint_force(const Packed& m, int64_t i, const Vec6& f, double* tau) {
  const int64_t va = m.vadr(i);
  for (int64_t k = 0; k < m.joint_nv(i); ++k) tau[va + k] = project(m, i, k, f);
}

// X m: the parent's spatial motion m in the coordinates of the body at `p` in that parent,
// (R^T ang, R^T (lin + ang x p))
inline Vec6 to_child(const Placement& p, const Vec6& m) {
  const double l0 = m[3] + m[1] * p[11] - m[2] * p[10];
  const double l1 = m[4] + m[2] * p[9] - m[0] * p[11];
  const double l2 = m[5] + m[0] * p[10] - m[1] * p[9];
  return {p[0] * m[0] + p[3] * m[1] + p[6] * m[2], p[1] * m[0] + p[4] * m[1] + p[7] * m[2],
          p[2] * m[0] + p[5] * m[1] + p[8] * m[2], p[0] * l0 + p[3] * l1 + p[6] * l2,
          p[1] * l0 + p[4] * l1 + p[7] * l2,       p[2] * l0 + p[5] * l1 + p[8] * l2};
}

// X^T f: the spatial force f of the body at `p` in its parent, in the parent's coordinates
inline Vec6 force_up(const Placement& p, const Vec6& f) {
  const double rn0 = p[0] * f[0] + p[1] * f[1] + p[2] * f[2];
  const double rn1 = p[3] * f[0] + p[4] * f[1] + p[5] * f[2];
  const double rn2 = p[6] * f[0] + p[7] * f[1] + p[8] * f[2];
  const double rf0 = p[0] * f[3] + p[1] * f[4] + p[2] * f[5];
  const double rf1 = p[3] * f[3] + p[4] * f[4] + p[5] * f[5];
  const double rf2 = p[6] * f[3] + p[7] * f[4] + p[8] * f[5];
  return {rn0 + p[10] * rf2 - p[11] * rf1, rn1 + p[11] * rf0 - p[9] * rf2,
          rn2 + p[9] * rf1 - p[10] * rf0,  rf0, rf1, rf2};
}

// v x m, the spatial motion cross product
inline Vec6 cross_motion(const Vec6& v, const Vec6& m) {
  return {v[1] * m[2] - v[2] * m[1],
          v[2] * m[0] - v[0] * m[2],
          v[0] * m[1] - v[1] * m[0],
          v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1],
          v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2],
          v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]};
}

// v x* h, the spatial force cross product
inline Vec6 cross_force(const Vec6& v, const Vec6& h) {
  return {v[1] * h[2] - v[2] * h[1] + v[4] * h[5] - v[5] * h[4],
          v[2] * h[0] - v[0] * h[2] + v[5] * h[3] - v[3] * h[5],
          v[0] * h[1] - v[1] * h[0] + v[3] * h[4] - v[4] * h[3],
          v[1] * h[5] - v[2] * h[4],
          v[2] * h[3] - v[0] * h[5],
          v[0] * h[4] - v[1] * h[3]};
}

// I m for the inertia (mass, first moment h (3), inertia about the origin (9, row-major))
inline Vec6 inertia_product(const double* inertia, const Vec6& m) {
  const double mass = inertia[0], h0 = inertia[1], h1 = inertia[2], h2 = inertia[3];
  const double* i = inertia + 4;
  return {i[0] * m[0] + i[1] * m[1] + i[2] * m[2] + h1 * m[5] - h2 * m[4],
          i[3] * m[0] + i[4] * m[1] + i[5] * m[2] + h2 * m[3] - h0 * m[5],
          i[6] * m[0] + i[7] * m[1] + i[8] * m[2] + h0 * m[4] - h1 * m[3],
          mass * m[3] - (h1 * m[2] - h2 * m[1]),
          mass * m[4] - (h2 * m[0] - h0 * m[2]),
          mass * m[5] - (h0 * m[1] - h1 * m[0])};
}

// I a + v x* (I v): the inertial force of a body of `inertia` (as in inertia_product) at
// velocity v and acceleration acc
inline Vec6 inertial_force(const double* inertia, const Vec6& v, const Vec6& acc) {
  return plus(inertia_product(inertia, acc), cross_force(v, inertia_product(inertia, v)));
}

// a spatial motion m of a body at the world placement `place` (12) in world coordinates:
// (R w, R v + p x (R w))
inline Vec6 motion_to_world(const double* place, const Vec6& m) {
  Vec6 out;
  for (int a = 0; a < 3; ++a) {
    out[a] = place[3 * a] * m[0] + place[3 * a + 1] * m[1] + place[3 * a + 2] * m[2];
    out[3 + a] = place[3 * a] * m[3] + place[3 * a + 1] * m[4] + place[3 * a + 2] * m[5];
  }
  out[3] += place[10] * out[2] - place[11] * out[1];
  out[4] += place[11] * out[0] - place[9] * out[2];
  out[5] += place[9] * out[1] - place[10] * out[0];
  return out;
}

// the halves of a spatial vector swapped: [linear; angular]
inline Vec6 swapped(const Vec6& x) { return {x[3], x[4], x[5], x[0], x[1], x[2]}; }

// a spatial force f of a body at the world placement `place` (12) in world coordinates:
// (R n + p x R g, R g), the motion transform of the force's halves swapped
inline Vec6 force_to_world(const double* place, const Vec6& f) {
  return swapped(motion_to_world(place, swapped(f)));
}

}  // namespace invdyn
