// Single-state kernels built on the dynamics: the joint-torque regressor, the Coriolis matrix,
// the centre of mass, the centroidal momentum matrix and the rate of the centroidal momentum.
#pragma once

#include "dynamics.hpp"
#include "kinematics.hpp"

namespace invdyn {

// the parameters of a body in the regressor: mass, first moment (3), inertia about the origin
// (xx, xy, yy, xz, yz, zz)
constexpr int BODY_PARAMETERS = 10;

// body i's (6, 10) force regressor Y_i (f_i = Y_i pi_i, row-major) from its velocity and
// acceleration in w
inline std::array<double, 60> regressor_columns(const double* w, int64_t i) {
  const Vec6 vel = row(w, i, W_V), acc = row(w, i, W_A);
  const Vec3 om = {vel[0], vel[1], vel[2]}, vl = {vel[3], vel[4], vel[5]};
  const Vec3 al_ang = {acc[0], acc[1], acc[2]}, al = {acc[3], acc[4], acc[5]};
  std::array<double, 60> y{};
  // mass: f = a_lin + w x v_lin
  y[30] = al[0] + om[1] * vl[2] - om[2] * vl[1];
  y[40] = al[1] + om[2] * vl[0] - om[0] * vl[2];
  y[50] = al[2] + om[0] * vl[1] - om[1] * vl[0];
  // first moment: n = e x a_lin + w x (e x v_lin) - v_lin x (e x w),
  // f = -e x alpha - w x (e x w)
  for (int k = 0; k < 3; ++k) {
    Vec3 e = {0.0, 0.0, 0.0};
    e[k] = 1.0;
    const Vec3 pushed = cross(e, al), carried = cross(om, cross(e, vl));
    const Vec3 swept = cross(vl, cross(e, om));
    const Vec3 turned = cross(e, al_ang), centripetal = cross(om, cross(e, om));
    for (int r = 0; r < 3; ++r) {
      y[10 * r + 1 + k] = pushed[r] + carried[r] - swept[r];
      y[10 * (3 + r) + 1 + k] = -turned[r] - centripetal[r];
    }
  }
  // rotational inertia entries (xx, xy, yy, xz, yz, zz): n = E alpha + w x (E w)
  constexpr int pairs[6][2] = {{0, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2}, {2, 2}};
  for (int c = 0; c < 6; ++c) {
    const int a = pairs[c][0], b = pairs[c][1];
    Vec3 ea = {0.0, 0.0, 0.0}, ew = {0.0, 0.0, 0.0};
    ea[a] += al_ang[b];
    ew[a] += om[b];
    if (a != b) {
      ea[b] += al_ang[a];
      ew[b] += om[a];
    }
    const Vec3 gyroscopic = cross(om, ew);
    for (int r = 0; r < 3; ++r) y[10 * r + 4 + c] = ea[r] + gyroscopic[r];
  }
  return y;
}

// Joint-torque regressor: Y (nv, 10 nbody + 3 nv) with rnea = Y params into out
inline int64_t regressor(const Packed& m, const double* q, const double* v, const double* a,
                         double* out) {
  struct Tag;
  const int64_t status = check_state(m, q, v, a, nullptr, 0);
  if (status != 0) return status;
  const int64_t nbody = m.nbody, nv = m.nv;
  const int64_t width = BODY_PARAMETERS * nbody + 3 * nv;
  double* w = new_work<Tag>(m);
  forward_pass(m, nbody, q, v, a, w);
  std::fill(out, out + nv * width, 0.0);
  for (int64_t i = 0; i < nbody; ++i) {
    const auto y = regressor_columns(w, i);
    for (int c = 0; c < BODY_PARAMETERS; ++c) {
      // the body's force per unit parameter, projected on every joint up to the root
      Vec6 force = six(y.data() + c, BODY_PARAMETERS);
      for (int64_t j = i; j >= 0; j = m.parent(j)) {
        const int64_t vj = m.vadr(j);
        for (int64_t k = 0; k < m.joint_nv(j); ++k)
          out[(vj + k) * width + BODY_PARAMETERS * i + c] = project(m, j, k, force);
        if (m.parent(j) >= 0) force = force_up(placement(w, j), force);
      }
    }
  }
  // armature, viscous and Coulomb friction columns
  for (int64_t k = 0; k < nv; ++k) {
    double* joint_columns = out + k * width + BODY_PARAMETERS * nbody;
    joint_columns[k] = a[k];
    joint_columns[nv + k] = v[k];
    joint_columns[2 * nv + k] = sign(v[k]);
  }
  return status_of_result(out, nv * width);
}

// the inertia (mass, h, I_o) of body i's coordinates moved to world coordinates
inline std::array<double, 13> inertia_to_world(const double* world, int64_t i,
                                               const double* inertia) {
  std::array<double, 13> moved{};
  add_inertia_to(placement_at(world + 12 * i), inertia, moved.data());
  return moved;
}

// call visit(d) for each dof d that moves body i, from its joint up to the root
template <typename Visit>
inline void for_each_dof_up(const Packed& m, int64_t i, Visit&& visit) {
  for (int64_t j = i; j >= 0; j = m.parent(j))
    for (int64_t k = 0; k < m.joint_nv(j); ++k) visit(m.vadr(j) + k);
}

// Coriolis matrix C (nv, nv) of the Christoffel symbols of M into out: C v the velocity product
// terms, C + C^T = M_dot. C = sum_i J_i^T (I_i J_dot_i + B(I_i, v_i) J_i) with the body
// Coriolis matrix B(I, v) = ((v x*) I - I (v x) + (I v) xbar*) / 2, where (f xbar*) m = m x* f
// (Echeandia and Wensing 2021, as Pinocchio's computeCoriolisMatrix), everything in the
// coordinates of each tree's root body (any fixed frame gives the same C)
inline int64_t coriolis(const Packed& m, const double* q, const double* v, double* out) {
  struct WorkTag;
  struct ZeroTag;
  struct WorldTag;
  struct VelocityTag;
  struct ColumnsTag;
  struct RatesTag;
  struct TermsTag;
  const int64_t status = check_state(m, q, v, v, nullptr, 0);
  if (status != 0) return status;
  const int64_t nbody = m.nbody, nv = m.nv;
  double* w = new_work<WorkTag>(m);
  double* zero = scratch<ZeroTag>(nv);
  std::fill(zero, zero + nv, 0.0);
  forward_pass(m, nbody, q, v, zero, w);
  double* world = scratch<WorldTag>(12 * nbody);
  world_placements(m, nbody, q, w, world, true);
  // world velocity of every body, and world columns S and S_dot = v_body x S of every dof
  double* vel = scratch<VelocityTag>(6 * nbody);
  double* cols = scratch<ColumnsTag>(6 * nv);
  double* rates = scratch<RatesTag>(6 * nv);
  for (int64_t i = 0; i < nbody; ++i) {
    const Vec6 body_vel = motion_to_world(world + 12 * i, row(w, i, W_V));
    put(vel + 6 * i, body_vel);
    for (int64_t k = 0; k < m.joint_nv(i); ++k) {
      const Vec6 col = motion_to_world(world + 12 * i, column(m, i, k));
      put(cols + 6 * (m.vadr(i) + k), col);
      put(rates + 6 * (m.vadr(i) + k), cross_motion(body_vel, col));
    }
  }
  std::fill(out, out + nv * nv, 0.0);
  double* terms = scratch<TermsTag>(6 * nv);
  for (int64_t i = 0; i < nbody; ++i) {
    // body i's inertia in world coordinates, and its momentum
    double inertia[36];
    spatial_inertia(inertia_to_world(world, i, m.body(i) + MASS).data(), inertia);
    const Vec6 body_vel = six(vel + 6 * i);
    Vec6 momentum;
    for (int r = 0; r < 6; ++r) {
      double acc = 0.0;
      for (int s = 0; s < 6; ++s) acc += inertia[6 * r + s] * body_vel[s];
      momentum[r] = acc;
    }
    // for each dof d that moves body i: I J_dot + (v x* (I J) - I (v x J) + J x* (I v)) / 2
    for_each_dof_up(m, i, [&](int64_t d) {
      const Vec6 col = six(cols + 6 * d), rate = six(rates + 6 * d);
      const Vec6 turned = cross_motion(body_vel, col), crossed = cross_force(col, momentum);
      Vec6 term, half_momentum;
      for (int r = 0; r < 6; ++r) {
        double acc = 0.0, acc2 = 0.0;
        for (int s = 0; s < 6; ++s) {
          acc += inertia[6 * r + s] * (rate[s] - 0.5 * turned[s]);
          acc2 += inertia[6 * r + s] * col[s];
        }
        term[r] = acc + 0.5 * crossed[r];
        half_momentum[r] = 0.5 * acc2;
      }
      put(terms + 6 * d, plus(term, cross_force(body_vel, half_momentum)));
    });
    // C[r, c] += S_r^T term_c over the dofs r, c that move body i
    for_each_dof_up(m, i, [&](int64_t r) {
      for_each_dof_up(m, i, [&](int64_t c) {
        double acc = 0.0;
        for (int s = 0; s < 6; ++s) acc += cols[6 * r + s] * terms[6 * c + s];
        out[r * nv + c] += acc;
      });
    });
  }
  return status_of_result(out, nv * nv);
}

struct MassAndCenter {
  double mass;
  Vec3 center;
};

// the robot's mass and its world centre of mass, sum_i (m_i p_i + R_i h_i) / m over the body
// placements world (nbody, 12), h_i the first mass moment in body coordinates
inline MassAndCenter mass_and_center(const Packed& m, const double* world) {
  double mass = 0.0;
  Vec3 moment = {0.0, 0.0, 0.0};
  for (int64_t i = 0; i < m.nbody; ++i) {
    const double* body = m.body(i);
    const double* place = world + 12 * i;
    mass += body[MASS];
    for (int r = 0; r < 3; ++r)
      moment[r] += body[MASS] * place[9 + r] + place[3 * r] * body[MOMENT] +
                   place[3 * r + 1] * body[MOMENT + 1] + place[3 * r + 2] * body[MOMENT + 2];
  }
  return {mass, {moment[0] / mass, moment[1] / mass, moment[2] / mass}};
}

// the spatial force f at the world origin taken about the point g: (n - g x f, f)
inline Vec6 about_point(const Vec6& f, const Vec3& g) {
  const Vec3 moment = cross(g, {f[3], f[4], f[5]});
  return {f[0] - moment[0], f[1] - moment[1], f[2] - moment[2], f[3], f[4], f[5]};
}

// whether the moving bodies have mass, so that there is a centre of mass
inline bool has_mass(const Packed& m) {
  double mass = 0.0;
  for (int64_t i = 0; i < m.nbody; ++i) mass += m.body(i)[MASS];
  return mass > 0.0;
}

// the world centre of mass (3) at configuration q into out
inline int64_t center_of_mass(const Packed& m, const double* q, double* out) {
  struct Tag;
  double* world = scratch<Tag>(12 * m.nbody);
  const int64_t status = forward_kinematics(m, q, world);
  if (status != 0) return status;
  const Vec3 center = mass_and_center(m, world).center;
  std::copy(center.begin(), center.end(), out);
  return status_of_result(out, 3);
}

// the centroidal momentum matrix A_G (6, nv) at configuration q into out, or for 3 `rows` its
// linear rows over the mass, the Jacobian of the centre of mass. Column k is the momentum of
// the subtree that dof k moves, I^c_i S_ik with the composite inertia of its body i (as in
// crba), moved to world coordinates and taken about the centre of mass G (Orin, Goswami and
// Lee 2013)
inline int64_t centroidal_matrix(const Packed& m, const double* q, int64_t rows, double* out) {
  struct WorkTag;
  struct WorldTag;
  struct CompositeTag;
  if (!all_finite(q, m.nq)) return 1;
  const int64_t nbody = m.nbody, nv = m.nv;
  // joint and world placements, centre of mass, composite inertias in body coordinates
  double* w = new_work<WorkTag>(m);
  double* world = scratch<WorldTag>(12 * nbody);
  world_placements(m, nbody, q, w, world, false);
  const MassAndCenter total = mass_and_center(m, world);
  const double* comp = composite_inertias<CompositeTag>(m, w);
  const double scale = rows == 6 ? 1.0 : 1.0 / total.mass;
  for (int64_t i = 0; i < nbody; ++i) {
    const int64_t va = m.vadr(i);
    for (int64_t k = 0; k < m.joint_nv(i); ++k) {
      // the subtree's momentum I^c_i S_ik, to world coordinates, about the centre of mass
      const Vec6 momentum = inertia_product(comp + 13 * i, column(m, i, k));
      const Vec6 col = about_point(force_up(placement_at(world + 12 * i), momentum), total.center);
      for (int64_t r = 0; r < rows; ++r) out[r * nv + va + k] = scale * col[6 - rows + r];
    }
  }
  return status_of_result(out, rows * nv);
}

// the rate of the centroidal momentum (6) at (q, v, a) into out: the sum of the bodies'
// inertial forces I_i a_i + v_i x* I_i v_i (the forward pass of rnea without gravity), moved to
// world coordinates and taken about the centre of mass
inline int64_t centroidal_rate(const Packed& m, const double* q, const double* v,
                               const double* a, double* out) {
  struct WorkTag;
  struct WorldTag;
  const int64_t status = check_state(m, q, v, a, nullptr, 0);
  if (status != 0) return status;
  const int64_t nbody = m.nbody;
  // each body's inertial force in its coordinates, the world at rest without gravity
  double* w = new_work<WorkTag>(m, false);
  forward_pass(m, nbody, q, v, a, w);
  double* world = scratch<WorldTag>(12 * nbody);
  world_placements(m, nbody, q, w, world, false);
  // their sum in world coordinates at the world origin, then about the centre of mass
  Vec6 total = ZERO6;
  for (int64_t i = 0; i < nbody; ++i)
    total = plus(total, force_up(placement_at(world + 12 * i), row(w, i, W_F)));
  put(out, about_point(total, mass_and_center(m, world).center));
  return status_of_result(out, 6);
}

}  // namespace invdyn
