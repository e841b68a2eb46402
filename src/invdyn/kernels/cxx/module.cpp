// The Python module invdyn.kernels._cpu: the kernels on numpy arrays.
//
// Every function takes the packed model (ints, reals) first, then C-contiguous arrays of the
// declared dtype and dimensions (read-only ones too, for inputs) and ints, and returns a
// status. An argument of another type raises TypeError; the ``*_vector`` functions, which
// serve calls of one state, return -1 for arrays of the wrong sizes, so that their callers'
// general path explains the error, and the ``*_batch`` functions raise ValueError for them.
// Batches release the GIL and share their states among the pool's threads (pool.hpp). Outputs
// must not overlap inputs: the Python callers allocate them.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_22_API_VERSION
#define NPY_TARGET_VERSION NPY_1_22_API_VERSION
#include <numpy/arrayobject.h>

#include <atomic>
#include <cstring>
#include <initializer_list>
#include <new>
#include <utility>

#include "centroidal.hpp"
#include "derivatives.hpp"
#include "kinematics.hpp"
#include "lanes.hpp"
#include "pool.hpp"

namespace invdyn {
namespace {

constexpr int MAX_ARGS = 10;

// one call from Python: the packed model, then the arguments of `specs`, each a body index
// ("body", -1 for the world), a JACOBIAN_* code ("ref") or an array given by its dimensions
// (an output where they start with '>'): numbers, the model's nq, nv and nbody, B the batch
// (set by its first use), F one state or B, K no body or nbody, R 3 or 6 rows, P the dynamic
// parameters (10 nbody + 3 nv)
class Call {
 public:
  Call(const char* name, PyObject* const* argv, Py_ssize_t nargs,
       std::initializer_list<const char*> specs)
      : name_(name) {
    if (specs.size() > MAX_ARGS || nargs != static_cast<Py_ssize_t>(specs.size()) + 2) {
      PyErr_Format(PyExc_TypeError, "%s takes %zu arguments, got %zd", name, specs.size() + 2,
                   nargs);
      return;
    }
    if (!read_model(argv)) return;
    batched_ = std::strncmp(*specs.begin(), "B ", 2) == 0;
    int k = 0;
    for (const char* spec : specs) {
      if (!read(k, spec, argv[k + 2])) return;
      ++k;
    }
    parsed_ = true;
  }

  // the result of a call whose arguments did not parse: nullptr with the error set, or -1
  // for a single state whose sizes were wrong
  bool ok() const { return parsed_ && sizes_ok_; }
  PyObject* failure() const {
    if (!parsed_) return nullptr;
    if (!batched_) return PyLong_FromLong(-1);
    PyErr_Format(PyExc_ValueError, "%s: argument %d does not fit the model or the batch", name_,
                 wrong_ + 2);
    return nullptr;
  }

  const double* in(int k, int64_t b = 0) const { return data(k) + b * stride_[k]; }
  double* out(int k, int64_t b = 0) const { return data(k) + b * stride_[k]; }
  int64_t integer(int k) const { return integers_[k]; }
  int64_t rows() const { return rows_; }
  // the external forces (F, K, 6) of argument k: of state b, how many bodies they cover (K)
  // and how many states they are given for (F)
  const double* forces(int k, int64_t b) const { return in(k, dim_[k] == 1 ? 0 : b); }
  int64_t force_bodies() const { return forces_; }
  int64_t force_states(int k) const { return dim_[k]; }

  // a single state's status from kernel(), or nullptr with MemoryError
  template <typename Kernel>
  PyObject* single(Kernel kernel) const {
    try {
      return PyLong_FromLongLong(kernel());
    } catch (const std::bad_alloc&) {
      return PyErr_NoMemory();
    }
  }

  // the worst status of kernel(start, stop) over pieces of the batch in whole `block`s, run
  // without the GIL on the pool's threads; nullptr with MemoryError
  template <typename Kernel>
  PyObject* pieces(int64_t block, Kernel kernel) const {
    std::atomic<int64_t> worst{0};
    std::atomic<bool> out_of_memory{false};
    Py_BEGIN_ALLOW_THREADS
    parallel_for(batch_, block, [&](int64_t start, int64_t stop) {
      try {
        const int64_t status = kernel(start, stop);
        int64_t seen = worst.load();
        while (status > seen && !worst.compare_exchange_weak(seen, status)) {
        }
      } catch (const std::bad_alloc&) {
        out_of_memory = true;
      }
    });
    Py_END_ALLOW_THREADS
    if (out_of_memory) return PyErr_NoMemory();
    return PyLong_FromLongLong(worst);
  }

  // the worst status of kernel(b) over every state b of the batch
  template <typename Kernel>
  PyObject* each(Kernel kernel) const {
    return pieces(1, [&](int64_t start, int64_t stop) {
      int64_t worst = 0;
      for (int64_t b = start; b < stop; ++b) worst = std::max(worst, kernel(b));
      return worst;
    });
  }

 private:
  bool read_model(PyObject* const* argv) {
    PyArrayObject* ints = as_array(0, argv[0], NPY_INT64, 2, false);
    PyArrayObject* reals = ints ? as_array(1, argv[1], NPY_FLOAT64, 2, false) : nullptr;
    if (reals == nullptr) return false;
    const int64_t nbody = PyArray_DIM(ints, 0), rows = PyArray_DIM(reals, 0);
    if (PyArray_DIM(ints, 1) != INT_COLUMNS || PyArray_DIM(reals, 1) != REAL_COLUMNS ||
        rows < nbody + 1) {
      PyErr_Format(PyExc_TypeError, "%s: (ints, reals) is not a packed model", name_);
      return false;
    }
    const auto* int_data = static_cast<const int64_t*>(PyArray_DATA(ints));
    const auto* real_data = static_cast<const double*>(PyArray_DATA(reals));
    if (!valid(int_data, real_data, nbody, rows)) {
      PyErr_Format(PyExc_ValueError, "%s: (ints, reals) is not a packed model: its joints' "
                   "parents, types or coordinates do not fit together", name_);
      return false;
    }
    m = Packed(int_data, real_data, nbody, rows);
    return true;
  }

  bool read(int k, const char* spec, PyObject* object) {
    const bool body = std::strcmp(spec, "body") == 0, ref = std::strcmp(spec, "ref") == 0;
    if (body || ref) {
      if (!PyLong_Check(object)) {
        PyErr_Format(PyExc_TypeError, "%s: argument %d must be an int", name_, k + 2);
        return false;
      }
      const int64_t value = integers_[k] = PyLong_AsLongLong(object);
      if (value == -1 && PyErr_Occurred()) return false;
      // a body index or the world (-1); a JACOBIAN_* code
      const bool fits = body ? (value >= -1 && value < m.nbody) : (value >= 0 && value <= 2);
      if (!fits && sizes_ok_) sizes_ok_ = false, wrong_ = k;
      return true;
    }
    const bool output = spec[0] == '>';
    const char* dims = output ? spec + 1 : spec;
    int ndim = 1;
    for (const char* c = dims; *c; ++c) ndim += *c == ' ';
    PyArrayObject* array = as_array(k + 2, object, NPY_FLOAT64, ndim, output);
    if (array == nullptr) return false;
    arrays_[k] = array;
    stride_[k] = PyArray_SIZE(array) / std::max<npy_intp>(PyArray_DIM(array, 0), 1);
    dim_[k] = PyArray_DIM(array, 0);
    for (int d = 0; d < ndim; ++d, dims = std::strchr(dims, ' ') + 1) {
      if (!fits(dims, PyArray_DIM(array, d)) && sizes_ok_) {
        sizes_ok_ = false;
        wrong_ = k;
      }
      if (d == ndim - 1) break;
    }
    // a single state's arrays count one state each
    if (!batched_) stride_[k] = 0;
    return true;
  }

  // whether `size` fits the dimension named at the start of `dim` (up to a space or the end)
  bool fits(const char* dim, int64_t size) {
    const size_t length = std::strcspn(dim, " ");
    const auto is = [&](const char* name) {
      return length == std::strlen(name) && std::strncmp(dim, name, length) == 0;
    };
    if (is("nq")) return size == m.nq;
    if (is("nv")) return size == m.nv;
    if (is("nbody")) return size == m.nbody;
    if (is("B")) {
      if (batch_ < 0) batch_ = size;
      return size == batch_;
    }
    if (is("F")) return size == 1 || size == batch_;
    if (is("K")) {
      forces_ = size;
      return size == 0 || size == m.nbody;
    }
    if (is("P")) return size == 10 * m.nbody + 3 * m.nv;
    if (is("R")) {
      rows_ = size;
      return size == 3 || size == 6;
    }
    return size == std::atoll(dim);
  }

  PyArrayObject* as_array(int position, PyObject* object, int type, int ndim, bool writable) {
    if (PyArray_Check(object)) {
      auto* array = reinterpret_cast<PyArrayObject*>(object);
      if (PyArray_TYPE(array) == type && PyArray_NDIM(array) == ndim &&
          PyArray_IS_C_CONTIGUOUS(array) && PyArray_ISALIGNED(array) &&
          PyArray_ISNOTSWAPPED(array) && (!writable || PyArray_ISWRITEABLE(array)))
        return array;
    }
    PyErr_Format(PyExc_TypeError, "%s: argument %d must be a C-contiguous, aligned%s %s array of "
                 "%d dimensions in the machine's byte order", name_, position,
                 writable ? ", writable" : "", type == NPY_INT64 ? "int64" : "float64", ndim);
    return nullptr;
  }

  double* data(int k) const { return static_cast<double*>(PyArray_DATA(arrays_[k])); }

  const char* name_;
  bool batched_ = false;
  bool parsed_ = false;
  bool sizes_ok_ = true;
  int wrong_ = 0;
  int64_t batch_ = -1;
  int64_t forces_ = 0;
  int64_t rows_ = 0;
  PyArrayObject* arrays_[MAX_ARGS] = {};
  int64_t stride_[MAX_ARGS] = {};
  int64_t dim_[MAX_ARGS] = {};
  int64_t integers_[MAX_ARGS] = {};

 public:
  Packed m;
};

#define FUNCTION(name) PyObject* name(PyObject*, PyObject* const* argv, Py_ssize_t nargs)
#define CALL(name, ...)                                   \
  const Call c(#name, argv, nargs, {__VA_ARGS__});         \
  if (!c.ok()) return c.failure();                         \
  const Packed& m = c.m

// ---- one state; -1 for wrong sizes ----

FUNCTION(rnea_vector) {
  CALL(rnea_vector, "nq", "nv", "nv", ">nv");
  return c.single([&] { return rnea(m, c.in(0), c.in(1), c.in(2), nullptr, 0, c.out(3)); });
}

FUNCTION(aba_vector) {
  CALL(aba_vector, "nq", "nv", "nv", ">nv");
  return c.single([&] { return aba(m, c.in(0), c.in(1), c.in(2), nullptr, 0, c.out(3)); });
}

FUNCTION(crba_vector) {
  CALL(crba_vector, "nq", ">nv nv");
  return c.single([&] { return crba(m, c.in(0), c.out(1)); });
}

FUNCTION(forward_kinematics_vector) {
  CALL(forward_kinematics_vector, "nq", ">nbody 12");
  return c.single([&] { return forward_kinematics(m, c.in(0), c.out(1)); });
}

FUNCTION(frame_placement_vector) {
  CALL(frame_placement_vector, "nq", "body", "12", ">12");
  return c.single([&] { return frame_placement(m, c.in(0), c.integer(1), c.in(2), c.out(3)); });
}

FUNCTION(frame_jacobian_vector) {
  CALL(frame_jacobian_vector, "nq", "body", "12", "ref", ">6 nv");
  return c.single([&] {
    return frame_jacobian(m, c.in(0), c.integer(1), c.in(2), c.integer(3), c.out(4));
  });
}

FUNCTION(frame_motion_vector) {
  CALL(frame_motion_vector, "nq", "nv", "nv", "body", "12", "ref", ">12");
  return c.single([&] {
    return frame_motion(m, c.in(0), c.in(1), c.in(2), c.integer(3), c.in(4), c.integer(5),
                        c.out(6));
  });
}

FUNCTION(center_of_mass_vector) {
  CALL(center_of_mass_vector, "nq", ">3");
  if (!has_mass(m)) return PyLong_FromLong(-1);
  return c.single([&] { return center_of_mass(m, c.in(0), c.out(1)); });
}

FUNCTION(centroidal_matrix_vector) {
  CALL(centroidal_matrix_vector, "nq", ">R nv");
  if (!has_mass(m)) return PyLong_FromLong(-1);
  return c.single([&] { return centroidal_matrix(m, c.in(0), c.rows(), c.out(1)); });
}

FUNCTION(centroidal_rate_vector) {
  CALL(centroidal_rate_vector, "nq", "nv", "nv", ">6");
  if (!has_mass(m)) return PyLong_FromLong(-1);
  return c.single([&] { return centroidal_rate(m, c.in(0), c.in(1), c.in(2), c.out(3)); });
}

FUNCTION(rnea_derivatives_vector) {
  CALL(rnea_derivatives_vector, "nq", "nv", "nv", ">3 nv nv");
  const int64_t size = m.nv * m.nv;
  double* out = c.out(3);
  return c.single([&] {
    return rnea_derivatives(m, c.in(0), c.in(1), c.in(2), nullptr, 0, out, out + size,
                            out + 2 * size);
  });
}

// ---- batches over the leading axis B; fext (F, K, 6) ----

FUNCTION(rnea_batch) {
  CALL(rnea_batch, "B nq", "B nv", "B nv", "F K 6", ">B nv");
  return c.pieces(LANES, [&](int64_t start, int64_t stop) {
    return rnea_lanes(m, c.in(0), c.in(1), c.in(2), c.in(3), c.force_states(3), c.force_bodies(),
                      c.out(4), start, stop);
  });
}

FUNCTION(aba_batch) {
  CALL(aba_batch, "B nq", "B nv", "B nv", "F K 6", ">B nv");
  return c.each([&](int64_t b) {
    return aba(m, c.in(0, b), c.in(1, b), c.in(2, b), c.forces(3, b), c.force_bodies(),
               c.out(4, b));
  });
}

FUNCTION(crba_batch) {
  CALL(crba_batch, "B nq", ">B nv nv");
  return c.each([&](int64_t b) { return crba(m, c.in(0, b), c.out(1, b)); });
}

FUNCTION(forward_kinematics_batch) {
  CALL(forward_kinematics_batch, "B nq", ">B nbody 12");
  return c.each([&](int64_t b) { return forward_kinematics(m, c.in(0, b), c.out(1, b)); });
}

FUNCTION(frame_placement_batch) {
  CALL(frame_placement_batch, "B nq", "body", "12", ">B 12");
  return c.each([&](int64_t b) {
    return frame_placement(m, c.in(0, b), c.integer(1), c.in(2), c.out(3, b));
  });
}

FUNCTION(frame_jacobian_batch) {
  CALL(frame_jacobian_batch, "B nq", "body", "12", "ref", ">B 6 nv");
  return c.each([&](int64_t b) {
    return frame_jacobian(m, c.in(0, b), c.integer(1), c.in(2), c.integer(3), c.out(4, b));
  });
}

FUNCTION(frame_motion_batch) {
  CALL(frame_motion_batch, "B nq", "B nv", "B nv", "body", "12", "ref", ">B 12");
  return c.each([&](int64_t b) {
    return frame_motion(m, c.in(0, b), c.in(1, b), c.in(2, b), c.integer(3), c.in(4),
                        c.integer(5), c.out(6, b));
  });
}

FUNCTION(regressor_batch) {
  CALL(regressor_batch, "B nq", "B nv", "B nv", ">B nv P");
  return c.each([&](int64_t b) {
    return regressor(m, c.in(0, b), c.in(1, b), c.in(2, b), c.out(3, b));
  });
}

FUNCTION(coriolis_batch) {
  CALL(coriolis_batch, "B nq", "B nv", ">B nv nv");
  return c.each([&](int64_t b) { return coriolis(m, c.in(0, b), c.in(1, b), c.out(2, b)); });
}

FUNCTION(center_of_mass_batch) {
  CALL(center_of_mass_batch, "B nq", ">B 3");
  return c.each([&](int64_t b) { return center_of_mass(m, c.in(0, b), c.out(1, b)); });
}

FUNCTION(centroidal_matrix_batch) {
  CALL(centroidal_matrix_batch, "B nq", ">B R nv");
  return c.each([&](int64_t b) {
    return centroidal_matrix(m, c.in(0, b), c.rows(), c.out(1, b));
  });
}

FUNCTION(centroidal_rate_batch) {
  CALL(centroidal_rate_batch, "B nq", "B nv", "B nv", ">B 6");
  return c.each([&](int64_t b) {
    return centroidal_rate(m, c.in(0, b), c.in(1, b), c.in(2, b), c.out(3, b));
  });
}

FUNCTION(rnea_derivatives_batch) {
  CALL(rnea_derivatives_batch, "B nq", "B nv", "B nv", "F K 6", ">B nv nv", ">B nv nv",
       ">B nv nv");
  return c.each([&](int64_t b) {
    return rnea_derivatives(m, c.in(0, b), c.in(1, b), c.in(2, b), c.forces(3, b),
                            c.force_bodies(), c.out(4, b), c.out(5, b), c.out(6, b));
  });
}

FUNCTION(aba_derivatives_batch) {
  CALL(aba_derivatives_batch, "B nq", "B nv", "B nv", "F K 6", ">B nv nv", ">B nv nv",
       ">B nv nv");
  return c.each([&](int64_t b) {
    return aba_derivatives(m, c.in(0, b), c.in(1, b), c.in(2, b), c.forces(3, b),
                           c.force_bodies(), c.out(4, b), c.out(5, b), c.out(6, b));
  });
}

// lane_sin_cos(x) -> (sin x, cos x), as the batched rnea computes them
PyObject* lane_sin_cos_of(PyObject*, PyObject* x) {
  const double value = PyFloat_AsDouble(x);
  if (value == -1.0 && PyErr_Occurred()) return nullptr;
  const auto sc = sin_cos(value);
  return Py_BuildValue("(dd)", sc[0], sc[1]);
}

#define ENTRY(name, doc) \
  {#name, reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(name)), METH_FASTCALL, doc}

// num_threads() -> the threads a large batch runs on: the pool's, started if need be
PyObject* num_threads(PyObject*, PyObject*) {
  try {
    return PyLong_FromLong(shared_pool().size());
  } catch (const std::bad_alloc&) {
    return PyErr_NoMemory();
  }
}

PyMethodDef methods[] = {
    ENTRY(rnea_vector, "rnea_vector(ints, reals, q, v, a, tau) -> status"),
    ENTRY(aba_vector, "aba_vector(ints, reals, q, v, tau, qdd) -> status"),
    ENTRY(crba_vector, "crba_vector(ints, reals, q, mass_matrix) -> status"),
    ENTRY(forward_kinematics_vector, "forward_kinematics_vector(ints, reals, q, world) -> status"),
    ENTRY(frame_placement_vector,
          "frame_placement_vector(ints, reals, q, body, frame, out) -> status"),
    ENTRY(frame_jacobian_vector,
          "frame_jacobian_vector(ints, reals, q, body, frame, ref, out) -> status"),
    ENTRY(frame_motion_vector,
          "frame_motion_vector(ints, reals, q, v, a, body, frame, ref, out) -> status"),
    ENTRY(center_of_mass_vector, "center_of_mass_vector(ints, reals, q, out) -> status"),
    ENTRY(centroidal_matrix_vector, "centroidal_matrix_vector(ints, reals, q, out) -> status"),
    ENTRY(centroidal_rate_vector, "centroidal_rate_vector(ints, reals, q, v, a, out) -> status"),
    ENTRY(rnea_derivatives_vector, "rnea_derivatives_vector(ints, reals, q, v, a, out) -> status"),
    ENTRY(rnea_batch, "rnea_batch(ints, reals, q, v, a, fext, tau) -> status"),
    ENTRY(aba_batch, "aba_batch(ints, reals, q, v, tau, fext, qdd) -> status"),
    ENTRY(crba_batch, "crba_batch(ints, reals, q, mass_matrix) -> status"),
    ENTRY(forward_kinematics_batch, "forward_kinematics_batch(ints, reals, q, world) -> status"),
    ENTRY(frame_placement_batch,
          "frame_placement_batch(ints, reals, q, body, frame, out) -> status"),
    ENTRY(frame_jacobian_batch,
          "frame_jacobian_batch(ints, reals, q, body, frame, ref, out) -> status"),
    ENTRY(frame_motion_batch,
          "frame_motion_batch(ints, reals, q, v, a, body, frame, ref, out) -> status"),
    ENTRY(regressor_batch, "regressor_batch(ints, reals, q, v, a, out) -> status"),
    ENTRY(coriolis_batch, "coriolis_batch(ints, reals, q, v, out) -> status"),
    ENTRY(center_of_mass_batch, "center_of_mass_batch(ints, reals, q, out) -> status"),
    ENTRY(centroidal_matrix_batch, "centroidal_matrix_batch(ints, reals, q, out) -> status"),
    ENTRY(centroidal_rate_batch, "centroidal_rate_batch(ints, reals, q, v, a, out) -> status"),
    ENTRY(rnea_derivatives_batch,
          "rnea_derivatives_batch(ints, reals, q, v, a, fext, dq, dv, da) -> status"),
    ENTRY(aba_derivatives_batch,
          "aba_derivatives_batch(ints, reals, q, v, tau, fext, dq, dv, dtau) -> status"),
    {"lane_sin_cos", lane_sin_cos_of, METH_O,
     "lane_sin_cos(x) -> (sin x, cos x), as the batched rnea computes them"},
    {"num_threads", num_threads, METH_NOARGS, "num_threads() -> the threads a large batch runs on"},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "_cpu",
                      "Compiled CPU kernels of invdyn (see invdyn.kernels.cpu).",
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace
}  // namespace invdyn

PyMODINIT_FUNC PyInit__cpu() {
  import_array();
  PyObject* module = PyModule_Create(&invdyn::module);
  if (module == nullptr) return nullptr;
  const std::pair<const char*, long long> constants[] = {
      {"REVOLUTE", invdyn::REVOLUTE},
      {"CONTINUOUS", invdyn::CONTINUOUS},
      {"PRISMATIC", invdyn::PRISMATIC},
      {"SPHERICAL", invdyn::SPHERICAL},
      {"FREE", invdyn::FREE},
      {"SINGULAR", invdyn::STATUS_SINGULAR},
      {"OVERFLOW", invdyn::STATUS_OVERFLOW},
      {"JACOBIAN_LOCAL", invdyn::JACOBIAN_LOCAL},
      {"JACOBIAN_WORLD", invdyn::JACOBIAN_WORLD},
      {"JACOBIAN_LOCAL_WORLD_ALIGNED", invdyn::JACOBIAN_LOCAL_WORLD_ALIGNED},
      {"PARALLEL_FROM", invdyn::PARALLEL_FROM},
      {"LANES", invdyn::LANES},
  };
  for (const auto& [name, value] : constants) {
    if (PyModule_AddIntConstant(module, name, value) < 0) {
      Py_DECREF(module);
      return nullptr;
    }
  }
  PyObject* range = PyFloat_FromDouble(invdyn::SIN_COS_RANGE);
  if (PyModule_AddObject(module, "SIN_COS_RANGE", range) < 0) {
    Py_XDECREF(range);
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
