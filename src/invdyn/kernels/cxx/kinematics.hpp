// Single-state kernels of frame kinematics: a frame's world placement, its Jacobian and its
// velocity and classical acceleration. A frame is given by its placement in a body (12 values:
// rotation row-major, then position), the body -1 being the world.
#pragma once

#include "dynamics.hpp"

namespace invdyn {

// write the world placement of the frame at `frame` in `body` into placed (12); return the
// world placements (body + 1, 12) of bodies 0..body
inline const double* frame_in_world(const Packed& m, const double* q, int64_t body,
                                    const double* frame, double* placed) {
  struct WorkTag;
  struct WorldTag;
  double* world = scratch<WorldTag>(12 * (body + 1));
  world_placements(m, body + 1, q, new_work<WorkTag>(m), world, false);
  if (body < 0) {
    std::copy(frame, frame + 12, placed);
    return world;
  }
  // the body's placement composed with the frame's: R F, o + R p
  const double* place = world + 12 * body;
  for (int r = 0; r < 3; ++r) {
    double origin = place[9 + r];
    for (int c = 0; c < 3; ++c) {
      origin += place[3 * r + c] * frame[9 + c];
      double turned = 0.0;
      for (int k = 0; k < 3; ++k) turned += place[3 * r + k] * frame[3 * k + c];
      placed[3 * r + c] = turned;
    }
    placed[9 + r] = origin;
  }
  return world;
}

// the world rotation (9, row-major) and origin (3) of the frame at `frame` in `body` into out
inline int64_t frame_placement(const Packed& m, const double* q, int64_t body,
                               const double* frame, double* out) {
  if (!all_finite(q, m.nq)) return 1;
  frame_in_world(m, q, body, frame, out);
  return status_of_result(out, 12);
}

// the Jacobian of the spatial velocity of the frame at `frame` in `body`, rows [angular;
// linear], into out (6, nv), in the JACOBIAN_* coordinates `ref`
inline int64_t frame_jacobian(const Packed& m, const double* q, int64_t body,
                              const double* frame, int64_t ref, double* out) {
  if (!all_finite(q, m.nq)) return 1;
  const int64_t nv = m.nv;
  Placement placed;
  const double* world = frame_in_world(m, q, body, frame, placed.data());
  const Vec3 frame_origin = {placed[9], placed[10], placed[11]};
  std::fill(out, out + 6 * nv, 0.0);
  // each joint on the path from the body to its root moves the frame
  for (int64_t i = body; i >= 0; i = m.parent(i)) {
    const double* joint = world + 12 * i;
    const Vec3 joint_origin = {joint[9], joint[10], joint[11]};
    for (int64_t k = 0; k < m.joint_nv(i); ++k) {
      const Vec6 s = column(m, i, k);
      Vec3 angular = turn(joint, {s[0], s[1], s[2]});
      // the motion at the world origin, u + o x w, then at the frame's origin, + w x p
      Vec3 linear = plus(turn(joint, {s[3], s[4], s[5]}), cross(joint_origin, angular));
      if (ref != JACOBIAN_WORLD) linear = plus(linear, cross(angular, frame_origin));
      // into the frame's axes: F^T w, F^T u
      if (ref == JACOBIAN_LOCAL) {
        angular = turn_back(placed.data(), angular);
        linear = turn_back(placed.data(), linear);
      }
      const int64_t col = m.vadr(i) + k;
      for (int r = 0; r < 3; ++r) {
        out[r * nv + col] = angular[r];
        out[(3 + r) * nv + col] = linear[r];
      }
    }
  }
  return status_of_result(out, 6 * nv);
}

// the spatial velocity and classical acceleration (of its origin, without gravity) of the
// frame at `frame` in `body`, [angular; linear] each, into out (12), in the JACOBIAN_*
// coordinates `ref`, for JACOBIAN_WORLD of the point of its body at the world origin
inline int64_t frame_motion(const Packed& m, const double* q, const double* v, const double* a,
                            int64_t body, const double* frame, int64_t ref, double* out) {
  struct Tag;
  const int64_t status = check_state(m, q, v, a, nullptr, 0);
  if (status != 0) return status;
  std::fill(out, out + 12, 0.0);
  if (body < 0) return 0;
  Placement placed;
  const double* world = frame_in_world(m, q, body, frame, placed.data());
  // the bodies' velocities and accelerations in their own coordinates, the world at rest
  double* w = new_work<Tag>(m, false);
  forward_pass(m, body + 1, q, v, a, w);
  const Vec6 vel = row(w, body, W_V), acc = row(w, body, W_A);
  const Vec3 omega = {vel[0], vel[1], vel[2]}, linear = {vel[3], vel[4], vel[5]};
  const Vec3 alpha = {acc[0], acc[1], acc[2]}, linear_acc = {acc[3], acc[4], acc[5]};
  // at the frame's origin p: velocity u + om x p, classical acceleration
  // b + al x p + om x (velocity)
  const Vec3 p = {frame[9], frame[10], frame[11]};
  const Vec3 point_vel = plus(linear, cross(omega, p));
  const Vec3 point_acc = plus(plus(linear_acc, cross(alpha, p)), cross(omega, point_vel));
  // into the frame's axes, or the world's
  const Vec3 vectors[4] = {omega, point_vel, alpha, point_acc};
  for (int n = 0; n < 4; ++n) {
    const Vec3 x = ref == JACOBIAN_LOCAL ? turn_back(frame, vectors[n])
                                         : turn(world + 12 * body, vectors[n]);
    std::copy(x.begin(), x.end(), out + 3 * n);
  }
  if (ref == JACOBIAN_WORLD) {
    // from the frame's origin x to the world's: velocity + x x om, acceleration
    // + x x al + om x (x x om), the change of the velocity term as the point moves
    const Vec3 x = {placed[9], placed[10], placed[11]};
    const Vec3 om = {out[0], out[1], out[2]}, al = {out[6], out[7], out[8]};
    const Vec3 shift = cross(x, om), shift_acc = cross(x, al), swept = cross(om, shift);
    for (int r = 0; r < 3; ++r) {
      out[3 + r] = out[3 + r] + shift[r];
      out[9 + r] = out[9 + r] + shift_acc[r] + swept[r];
    }
  }
  return status_of_result(out, 12);
}

}  // namespace invdyn
