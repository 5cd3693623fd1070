// ztensor._ext: the per-tensor work of loading a whole file, in C++.
//
// The ctypes binding costs about 1-2 us of Python per tensor on top of the C
// read (table wrapping, grouping, request building, array creation); this
// module does that work in one call per file so that loading 10^5 tensors
// costs little more than the library's own read (bindings/python/README.md,
// "Performance"). It does not link libztensor: the binding hands it the
// addresses of the functions of the very library ctypes loaded (bind()), so
// one process never mixes two copies of the library, and the module builds
// wherever Python's and numpy's headers are (ztensor.h gives only types).
//
// Memory: read_dense() reads into one new numpy array (the arena) that this
// process owns, and every tensor it returns is a view whose base is that
// arena: the tensors keep it alive, and nothing done to the file later can
// reach them. mapped_views() is the copy=False opt-in: read-only arrays of
// the library's copy-on-write mapping, whose base is the caller's file
// handle object (which keeps the zt_file open while any of them lives).
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ztensor.h"

namespace {

// The library's functions, as bind() received them (ctypes addresses).
struct Api {
  decltype(&zt_file_object_table) object_table = nullptr;
  decltype(&zt_file_read_many) read_many = nullptr;
  decltype(&zt_free) free = nullptr;
  decltype(&zt_object_component) component = nullptr;
  decltype(&zt_component_view) view = nullptr;
  decltype(&zt_component_read) read = nullptr;
};
Api api;

// Owns one reference; released at scope exit unless released() first.
class Ref {
 public:
  explicit Ref(PyObject *p = nullptr) : p_(p) {}
  Ref(const Ref &) = delete;
  Ref &operator=(const Ref &) = delete;
  ~Ref() { Py_XDECREF(p_); }
  PyObject *get() const { return p_; }
  PyObject *release() {
    PyObject *p = p_;
    p_ = nullptr;
    return p;
  }
  void reset(PyObject *p) {
    Py_XDECREF(p_);
    p_ = p;
  }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  PyObject *p_;
};

// A read-only view of a Python buffer (bytes, numpy array), released at scope exit.
class Buffer {
 public:
  Buffer() { std::memset(&view_, 0, sizeof view_); }
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer() {
    if (held_) PyBuffer_Release(&view_);
  }
  bool get(PyObject *obj) {
    if (PyObject_GetBuffer(obj, &view_, PyBUF_SIMPLE) != 0) return false;
    held_ = true;
    return true;
  }
  const char *data() const { return static_cast<const char *>(view_.buf); }
  size_t size() const { return static_cast<size_t>(view_.len); }

 private:
  Py_buffer view_;
  bool held_ = false;
};

bool bound() {
  if (api.object_table && api.read_many && api.free && api.component && api.view && api.read) return true;
  PyErr_SetString(PyExc_RuntimeError, "ztensor._ext: bind() was not called with the library's functions");
  return false;
}

void *address(PyObject *v) {
  void *p = PyLong_AsVoidPtr(v);
  return PyErr_Occurred() ? nullptr : p;
}

// bind(object_table, read_many, free, component, view, read): the addresses of
// those zt_* functions in the library the binding loaded.
PyObject *bind(PyObject *, PyObject *args) {
  PyObject *a[6];
  if (!PyArg_ParseTuple(args, "OOOOOO", &a[0], &a[1], &a[2], &a[3], &a[4], &a[5])) return nullptr;
  void *p[6];
  for (int i = 0; i < 6; ++i) {
    p[i] = address(a[i]);
    if (!p[i]) {
      if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "bind(): a function address is NULL");
      return nullptr;
    }
  }
  // Bound once, by the binding at import: a later call with other addresses
  // would have the module jump wherever it was told.
  if (api.object_table) {
    const void *was[6] = {reinterpret_cast<void *>(api.object_table), reinterpret_cast<void *>(api.read_many),
                          reinterpret_cast<void *>(api.free),         reinterpret_cast<void *>(api.component),
                          reinterpret_cast<void *>(api.view),         reinterpret_cast<void *>(api.read)};
    for (int i = 0; i < 6; ++i)
      if (was[i] != p[i]) {
        PyErr_SetString(PyExc_RuntimeError, "bind(): the module is bound to the library's functions already");
        return nullptr;
      }
    Py_RETURN_NONE;
  }
  api.object_table = reinterpret_cast<decltype(api.object_table)>(p[0]);
  api.read_many = reinterpret_cast<decltype(api.read_many)>(p[1]);
  api.free = reinterpret_cast<decltype(api.free)>(p[2]);
  api.component = reinterpret_cast<decltype(api.component)>(p[3]);
  api.view = reinterpret_cast<decltype(api.view)>(p[4]);
  api.read = reinterpret_cast<decltype(api.read)>(p[5]);
  Py_RETURN_NONE;
}

PyObject *decode_name(const char *p, size_t n) {
  return PyUnicode_DecodeUTF8(p, static_cast<Py_ssize_t>(n), "surrogateescape");
}

// object_table(file) -> (rows: bytes, row_size, names: list, dims: bytes)
// or the zt_status (an int) of a failed zt_file_object_table, for the
// caller's check() to raise with the library's message. The name -> row
// index is left to Python (ztensor._table), which builds it the first time
// a lookup by name needs it: a whole-file load never does.
PyObject *object_table(PyObject *, PyObject *arg) {
  if (!bound()) return nullptr;
  auto *file = static_cast<const zt_file *>(address(arg));
  if (!file) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "object_table(): the file is closed");
    return nullptr;
  }
  zt_object_table *t = nullptr;
  zt_status st = api.object_table(file, &t);
  if (st != ZT_OK) return PyLong_FromLong(st);
  struct Free {
    zt_object_table *t;
    ~Free() { api.free(t); }
  } free_table{t};
  if (t->row_size < sizeof(zt_object_row)) {
    PyErr_Format(PyExc_ImportError, "libztensor's zt_object_row is %zu bytes, this module reads %zu", t->row_size,
                 sizeof(zt_object_row));
    return nullptr;
  }
  const size_t count = t->count;
  Ref rows(
      PyBytes_FromStringAndSize(reinterpret_cast<const char *>(t->rows), static_cast<Py_ssize_t>(count * t->row_size)));
  Ref names(PyList_New(static_cast<Py_ssize_t>(count)));
  Ref dims(PyBytes_FromStringAndSize(reinterpret_cast<const char *>(t->dims),
                                     static_cast<Py_ssize_t>(t->dims_len * sizeof(uint64_t))));
  if (!rows || !names || !dims) return nullptr;
  const char *base = reinterpret_cast<const char *>(t->rows);
  for (size_t i = 0; i < count; ++i) {
    zt_object_row row;
    std::memcpy(&row, base + i * t->row_size, sizeof row);
    if (row.name_offset > t->names_len || row.name_len > t->names_len - row.name_offset) {
      PyErr_Format(PyExc_ValueError, "zt_file_object_table: row %zu names bytes outside the names block", i);
      return nullptr;
    }
    PyObject *name = decode_name(t->names + row.name_offset, row.name_len);
    if (!name) return nullptr;
    PyList_SET_ITEM(names.get(), static_cast<Py_ssize_t>(i), name);  // steals
  }
  return Py_BuildValue("(NnNN)", rows.release(), static_cast<Py_ssize_t>(t->row_size), names.release(), dims.release());
}

// The table's rows and dims as read_dense/mapped_views receive them.
struct Table {
  Buffer rows, dims;
  size_t row_size = 0, count = 0, dims_len = 0;
  PyObject *names = nullptr;  // list, borrowed

  bool open(PyObject *rows_obj, Py_ssize_t row_size_arg, PyObject *dims_obj, PyObject *names_obj) {
    if (!rows.get(rows_obj) || !dims.get(dims_obj)) return false;
    if (row_size_arg < static_cast<Py_ssize_t>(sizeof(zt_object_row)) || !PyList_Check(names_obj)) {
      PyErr_SetString(PyExc_ValueError, "ztensor._ext: a table of the wrong layout");
      return false;
    }
    row_size = static_cast<size_t>(row_size_arg);
    count = rows.size() / row_size;
    dims_len = dims.size() / sizeof(uint64_t);
    names = names_obj;
    if (static_cast<size_t>(PyList_GET_SIZE(names)) != count) {
      PyErr_SetString(PyExc_ValueError, "ztensor._ext: names and rows differ in number");
      return false;
    }
    return true;
  }
  zt_object_row row(size_t i) const {
    zt_object_row r;
    std::memcpy(&r, rows.data() + i * row_size, sizeof r);
    return r;
  }
  const uint64_t *shape(const zt_object_row &r) const {
    return reinterpret_cast<const uint64_t *>(dims.data()) + r.dims_offset;
  }
  bool shape_ok(const zt_object_row &r) const {
    return r.dims_offset <= dims_len && r.ndim <= dims_len - r.dims_offset;
  }
  PyObject *name(size_t i) const { return PyList_GET_ITEM(names, static_cast<Py_ssize_t>(i)); }
};

// The rows asked for: every row (select None), a list of ints, or an int64
// buffer of row indices.
bool selection(PyObject *select, const Table &table, std::vector<size_t> &out) {
  if (select == Py_None) {
    out.resize(table.count);
    for (size_t i = 0; i < table.count; ++i) out[i] = i;
    return true;
  }
  if (PyList_Check(select)) {
    const Py_ssize_t n = PyList_GET_SIZE(select);
    out.resize(static_cast<size_t>(n));
    for (Py_ssize_t k = 0; k < n; ++k) {
      const Py_ssize_t v = PyLong_AsSsize_t(PyList_GET_ITEM(select, k));
      if (v == -1 && PyErr_Occurred()) return false;
      if (v < 0 || static_cast<size_t>(v) >= table.count) {
        PyErr_Format(PyExc_IndexError, "ztensor._ext: row %zd is not in the table", v);
        return false;
      }
      out[static_cast<size_t>(k)] = static_cast<size_t>(v);
    }
    return true;
  }
  Buffer b;
  if (!b.get(select)) return false;
  const size_t n = b.size() / sizeof(int64_t);
  out.resize(n);
  for (size_t k = 0; k < n; ++k) {
    int64_t v;
    std::memcpy(&v, b.data() + k * sizeof v, sizeof v);
    if (v < 0 || static_cast<uint64_t>(v) >= table.count) {
      PyErr_Format(PyExc_IndexError, "ztensor._ext: row %lld is not in the table", static_cast<long long>(v));
      return false;
    }
    out[k] = static_cast<size_t>(v);
  }
  return true;
}

// One element type as type_of(code, logical) gives it: (numpy dtype, zt type name).
struct ElementType {
  PyArray_Descr *descr = nullptr;  // borrowed from `entry`
  PyObject *zt_type = nullptr;     // borrowed from `entry`
  size_t itemsize = 1;
  Ref entry;
};

// Element types by (dtype code, logical type), asked of Python once each.
class Types {
 public:
  explicit Types(PyObject *type_of) : type_of_(type_of) {}
  // The type of `row`'s data component; nullptr with an exception set.
  ElementType *of(const zt_object_row &row) {
    // A checkpoint's rows mostly share one type: that one without a lookup.
    if (!row.data_has_logical_type && last_plain_ && row.data_dtype == last_code_) return last_plain_;
    std::string logical;
    bool has_logical = false;
    if (row.data_has_logical_type) {
      zt_component_info ci;
      std::memset(&ci, 0, sizeof ci);
      ci.struct_size = sizeof ci;
      zt_status st = api.component(row.object, static_cast<size_t>(row.data_component), &ci);
      if (st != ZT_OK) {
        PyErr_Format(PyExc_RuntimeError, "zt_object_component failed (%d)", st);
        return nullptr;
      }
      if (ci.logical_type) {
        logical = ci.logical_type;
        has_logical = true;
      }
    }
    auto key = std::make_pair(static_cast<int>(row.data_dtype) * 2 + (has_logical ? 1 : 0), logical);
    auto it = types_.find(key);
    if (it != types_.end()) return remember(has_logical, row, &it->second);
    Ref name(has_logical ? decode_name(logical.data(), logical.size()) : (Py_INCREF(Py_None), Py_None));
    if (!name) return nullptr;
    Ref result(PyObject_CallFunction(type_of_, "iO", static_cast<int>(row.data_dtype), name.get()));
    if (!result) return nullptr;
    if (!PyTuple_Check(result.get()) || PyTuple_GET_SIZE(result.get()) != 2 ||
        !PyArray_DescrCheck(PyTuple_GET_ITEM(result.get(), 0))) {
      PyErr_SetString(PyExc_TypeError, "ztensor._ext: type_of must return (numpy dtype, str)");
      return nullptr;
    }
    auto *descr = reinterpret_cast<PyArray_Descr *>(PyTuple_GET_ITEM(result.get(), 0));
    if (PyDataType_REFCHK(descr)) {
      // File bytes viewed as PyObject pointers would be dereferenced by numpy.
      PyErr_SetString(PyExc_TypeError, "ztensor._ext: type_of returned a dtype holding Python objects");
      return nullptr;
    }
    ElementType &t = types_[key];
    t.descr = descr;
    t.zt_type = PyTuple_GET_ITEM(result.get(), 1);
    t.itemsize = static_cast<size_t>(t.descr->elsize > 0 ? t.descr->elsize : 1);
    t.entry.reset(result.release());
    return remember(has_logical, row, &t);
  }

 private:
  ElementType *remember(bool has_logical, const zt_object_row &row, ElementType *t) {
    if (!has_logical) {
      last_plain_ = t;  // map nodes do not move
      last_code_ = row.data_dtype;
    }
    return t;
  }
  PyObject *type_of_;
  std::map<std::pair<int, std::string>, ElementType> types_;
  ElementType *last_plain_ = nullptr;
  decltype(zt_object_row::data_dtype) last_code_ = 0;
};

// Up to this many requests of at most this many bytes in all are read one by
// one (zt_component_read) instead of by zt_file_read_many (see read_dense).
constexpr size_t kSerialCount = 8;
constexpr size_t kSerialBytes = size_t{1} << 20;

// Tensors of one element type and shape, laid out back to back in the arena.
struct Group {
  ElementType *type;
  std::vector<npy_intp> shape;
  size_t each = 0;              // bytes per tensor
  size_t offset = 0;            // of the first, in the arena
  std::vector<size_t> members;  // positions in the selection
};

// A new numpy array of `type` and `shape` over `data`, whose base is `base`.
PyObject *view_of(const ElementType &type, int ndim, const npy_intp *shape, void *data, PyObject *base, bool writable) {
  Py_INCREF(type.descr);  // NewFromDescr steals it
  PyObject *a = PyArray_NewFromDescr(&PyArray_Type, type.descr, ndim, const_cast<npy_intp *>(shape), nullptr, data,
                                     writable ? NPY_ARRAY_CARRAY : NPY_ARRAY_CARRAY_RO, nullptr);
  if (!a) return nullptr;
  Py_INCREF(base);
  if (PyArray_SetBaseObject(reinterpret_cast<PyArrayObject *>(a), base) != 0) {  // steals base
    Py_DECREF(a);
    return nullptr;
  }
  return a;
}

// The shape of a row as npy_intp; false when a dimension does not fit.
bool shape_of(const Table &table, const zt_object_row &row, std::vector<npy_intp> &out) {
  const uint64_t *d = table.shape(row);
  out.resize(row.ndim);
  for (uint32_t j = 0; j < row.ndim; ++j) {
    if (d[j] > static_cast<uint64_t>(NPY_MAX_INTP)) return false;
    out[j] = static_cast<npy_intp>(d[j]);
  }
  return true;
}

// Bytes of a tensor of this shape; false on overflow.
bool bytes_of(const std::vector<npy_intp> &shape, size_t itemsize, size_t &out) {
  size_t n = itemsize;
  for (npy_intp d : shape)
    if (__builtin_mul_overflow(n, static_cast<size_t>(d), &n)) return false;
  out = n;
  return true;
}

// The dict {name: value} in selection order, `values` taken over.
PyObject *as_dict(const Table &table, const std::vector<size_t> &rows, std::vector<PyObject *> &values) {
#if PY_VERSION_HEX < 0x030D0000
  Ref d(_PyDict_NewPresized(static_cast<Py_ssize_t>(rows.size())));  // no rehash as it grows
#else
  Ref d(PyDict_New());  // the presized constructor is private CPython API: used only up to 3.12
#endif
  bool ok = static_cast<bool>(d);
  for (size_t k = 0; k < rows.size(); ++k) {
    PyObject *v = values[k] ? values[k] : Py_None;
    if (ok && PyDict_SetItem(d.get(), table.name(rows[k]), v) != 0) ok = false;
    Py_XDECREF(values[k]);
    values[k] = nullptr;
  }
  return ok ? d.release() : nullptr;
}

void drop(std::vector<PyObject *> &values) {
  for (PyObject *&v : values) Py_CLEAR(v);
}

// read_dense(file, rows, row_size, dims, names, select, type_of, split)
//   -> (dict {name: tensor}, failed: [(name, row, dtype, zt_type, shape)])
//
// Reads the "data" component of every selected row (all dense) with one
// zt_file_read_many into one new arena. Tensors are grouped by element
// type and shape; split=None gives a numpy array per tensor, else
// split(block, zt_type, first name) turns each group's (count, *shape)
// block into the framework's tensors (a sequence of count). Tensors that
// could not be read into their slot (a declared size other than the
// shape's, a failed read) are None in the dict and listed in `failed`,
// for the caller to read alone (which sizes them or raises with detail).
PyObject *read_dense(PyObject *, PyObject *args) {
  PyObject *file_obj, *rows_obj, *dims_obj, *names_obj, *select, *type_of, *split;
  Py_ssize_t row_size;
  if (!PyArg_ParseTuple(args, "OOnOOOOO", &file_obj, &rows_obj, &row_size, &dims_obj, &names_obj, &select, &type_of,
                        &split))
    return nullptr;
  if (!bound()) return nullptr;
  auto *file = static_cast<const zt_file *>(address(file_obj));
  if (!file) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "read_dense(): the file is closed");
    return nullptr;
  }
  Table table;
  std::vector<size_t> rows;
  if (!table.open(rows_obj, row_size, dims_obj, names_obj) || !selection(select, table, rows)) return nullptr;
  const size_t n = rows.size();

  // Group by (element type, shape): consecutive rows mostly share both.
  Types types(type_of);
  std::vector<Group> groups;
  std::map<std::pair<ElementType *, std::vector<npy_intp>>, size_t> group_of;
  std::vector<size_t> member_group(n, SIZE_MAX);  // SIZE_MAX: read alone
  Ref failed(PyList_New(0));
  if (!failed) return nullptr;
  std::vector<npy_intp> shape;
  size_t last = SIZE_MAX;
  for (size_t k = 0; k < n; ++k) {
    const zt_object_row row = table.row(rows[k]);
    if (!row.dense || row.data_component == UINT64_MAX) {
      PyErr_Format(PyExc_ValueError, "read_many reads dense objects; %R is not a dense tensor", table.name(rows[k]));
      return nullptr;
    }
    if (!table.shape_ok(row)) {
      PyErr_Format(PyExc_ValueError, "zt_file_object_table: %R has its shape outside the dims block",
                   table.name(rows[k]));
      return nullptr;
    }
    ElementType *type = types.of(row);
    if (!type) return nullptr;
    size_t each = 0;
    bool fits = shape_of(table, row, shape) && bytes_of(shape, type->itemsize, each);
    if (fits && each == row.data_decoded_length) {
      size_t g;
      if (last != SIZE_MAX && groups[last].type == type && groups[last].shape == shape) {
        g = last;
      } else {
        auto key = std::make_pair(type, shape);
        auto it = group_of.find(key);
        if (it == group_of.end()) {
          it = group_of.emplace(std::move(key), groups.size()).first;
          groups.push_back(Group{type, shape, each, 0, {}});
        }
        g = it->second;
      }
      member_group[k] = g;
      groups[g].members.push_back(k);
      last = g;
      continue;
    }
    // Not read into the arena: read alone by the caller.
    Ref shape_tuple(PyTuple_New(static_cast<Py_ssize_t>(row.ndim)));
    if (!shape_tuple) return nullptr;
    const uint64_t *d = table.shape(row);
    for (uint32_t j = 0; j < row.ndim; ++j) {
      PyObject *v = PyLong_FromUnsignedLongLong(d[j]);
      if (!v) return nullptr;
      PyTuple_SET_ITEM(shape_tuple.get(), j, v);
    }
    Ref entry(Py_BuildValue("(OnOOO)", table.name(rows[k]), static_cast<Py_ssize_t>(rows[k]), type->descr,
                            type->zt_type, shape_tuple.get()));
    if (!entry || PyList_Append(failed.get(), entry.get()) != 0) return nullptr;
  }

  // Lay the groups out, each from a 64-byte boundary.
  size_t total = 0;
  for (Group &g : groups) {
    size_t span;
    if (total > SIZE_MAX - 63 || __builtin_mul_overflow(g.each, g.members.size(), &span)) return PyErr_NoMemory();
    g.offset = (total + 63) / 64 * 64;
    if (__builtin_add_overflow(g.offset, span, &total) || total > static_cast<size_t>(NPY_MAX_INTP))
      return PyErr_NoMemory();
  }
  npy_intp arena_len = static_cast<npy_intp>(total ? total : 1);
  Ref arena(PyArray_SimpleNew(1, &arena_len, NPY_UINT8));  // numpy's allocator: huge pages for big arrays
  if (!arena) return nullptr;
  char *base = static_cast<char *>(PyArray_DATA(reinterpret_cast<PyArrayObject *>(arena.get())));

  std::vector<zt_read_request> reqs;
  std::vector<size_t> req_member;
  reqs.reserve(n);
  req_member.reserve(n);
  for (const Group &g : groups) {
    for (size_t s = 0; s < g.members.size(); ++s) {
      const zt_object_row row = table.row(rows[g.members[s]]);
      zt_read_request r;
      std::memset(&r, 0, sizeof r);
      r.object = row.object;
      r.component = static_cast<size_t>(row.data_component);
      r.dst = base + g.offset + s * g.each;
      r.dst_capacity = g.each;
      r.status = ZT_E_IO;  // not read, unless the library says so
      reqs.push_back(r);
      req_member.push_back(g.members[s]);
    }
  }
  // zt_file_read_many costs ~10 us to set up its parallel read, ~6x a
  // zt_component_read of a small tensor: a few small tensors (get_tensor
  // of one name) are read one by one; large ones keep the parallel copy.
  const bool serial = reqs.size() <= kSerialCount && total <= kSerialBytes;
  // The tensor objects are made first, then the file is read with the GIL
  // released. Making them on this thread while the read ran on another (the
  // two overlapping) cost more than it saved: in four interleaved runs of
  // fresh processes, torch's load_file of 26,215 tensors took 1.49-1.99x the
  // C read with the overlap and 1.20-1.61x without it (the same runs), as
  // the read's own threads and this one contended for two cores. The
  // objects are views; nothing reads their bytes before the read below, and
  // a failed read's objects are dropped after it.
  std::vector<PyObject *> values(n, nullptr);
  for (size_t gi = 0; gi < groups.size(); ++gi) {
    const Group &g = groups[gi];
    if (split == Py_None) {
      for (size_t s = 0; s < g.members.size(); ++s) {
        const size_t k = g.members[s];
        values[k] = view_of(*g.type, static_cast<int>(g.shape.size()), g.shape.data(), base + g.offset + s * g.each,
                            arena.get(), true);
        if (!values[k]) {
          drop(values);
          return nullptr;
        }
      }
      continue;
    }
    std::vector<npy_intp> block_shape;
    block_shape.reserve(g.shape.size() + 1);
    block_shape.push_back(static_cast<npy_intp>(g.members.size()));
    block_shape.insert(block_shape.end(), g.shape.begin(), g.shape.end());
    Ref block(
        view_of(*g.type, static_cast<int>(block_shape.size()), block_shape.data(), base + g.offset, arena.get(), true));
    Ref parts(block ? PyObject_CallFunctionObjArgs(split, block.get(), g.type->zt_type, table.name(rows[g.members[0]]),
                                                   nullptr)
                    : nullptr);
    Ref seq(parts ? PySequence_Fast(parts.get(), "split() must return a sequence") : nullptr);
    if (seq && static_cast<size_t>(PySequence_Fast_GET_SIZE(seq.get())) != g.members.size()) {
      PyErr_SetString(PyExc_ValueError, "split() returned a different number of tensors than the block holds");
      seq.reset(nullptr);
    }
    if (!seq) {
      drop(values);
      return nullptr;
    }
    PyObject **items = PySequence_Fast_ITEMS(seq.get());
    for (size_t s = 0; s < g.members.size(); ++s) {
      const size_t k = g.members[s];
      Py_INCREF(items[s]);
      values[k] = items[s];
    }
  }
  if (!reqs.empty()) {
    // The file is held by the caller; the arena is ours alone.
    PyThreadState *gil = PyEval_SaveThread();
    if (serial) {
      for (zt_read_request &r : reqs) r.status = api.read(r.object, r.component, r.dst, r.dst_capacity, &r.out_size);
    } else {
      api.read_many(file, reqs.data(), reqs.size());  // each request has its own status
    }
    PyEval_RestoreThread(gil);
  }
  std::vector<char> read_ok(n, 0);
  for (size_t i = 0; i < reqs.size(); ++i)
    read_ok[req_member[i]] = reqs[i].status == ZT_OK && reqs[i].out_size == reqs[i].dst_capacity;
  for (size_t k = 0; k < n; ++k)
    if (!read_ok[k]) Py_CLEAR(values[k]);
  // Read into their slot but failed there: read alone by the caller too.
  for (size_t k = 0; k < n; ++k) {
    if (member_group[k] == SIZE_MAX || read_ok[k]) continue;
    const Group &g = groups[member_group[k]];
    Ref shape_tuple(PyTuple_New(static_cast<Py_ssize_t>(g.shape.size())));
    bool ok = static_cast<bool>(shape_tuple);
    for (size_t j = 0; ok && j < g.shape.size(); ++j) {
      PyObject *v = PyLong_FromSsize_t(g.shape[j]);
      if (!v)
        ok = false;
      else
        PyTuple_SET_ITEM(shape_tuple.get(), static_cast<Py_ssize_t>(j), v);
    }
    Ref entry(ok ? Py_BuildValue("(OnOOO)", table.name(rows[k]), static_cast<Py_ssize_t>(rows[k]), g.type->descr,
                                 g.type->zt_type, shape_tuple.get())
                 : nullptr);
    if (!entry || PyList_Append(failed.get(), entry.get()) != 0) {
      drop(values);
      return nullptr;
    }
  }
  PyObject *d = as_dict(table, rows, values);
  if (!d) return nullptr;
  return Py_BuildValue("(NN)", d, failed.release());
}

// mapped_views(file, rows, row_size, dims, names, select, type_of, keeper, convert)
//   -> (dict {name: value or None}, status)
//
// Zero-copy arrays of the library's mapping (zt_component_view) for the
// selected dense rows; each array's base is `keeper` (the binding's file
// handle object, which keeps the mapping alive). convert=None gives the
// read-only numpy arrays, else convert(array, zt_type, name) each (torch).
// Rows whose data cannot be viewed (ZT_E_NOT_ZERO_COPY: zstd, big-endian;
// or a size other than the shape's) are None, for the caller to read as
// copies. Any other failure stops with its status (the second item), for
// the caller's check().
PyObject *mapped_views(PyObject *, PyObject *args) {
  PyObject *file_obj, *rows_obj, *dims_obj, *names_obj, *select, *type_of, *keeper, *convert;
  Py_ssize_t row_size;
  if (!PyArg_ParseTuple(args, "OOnOOOOOO", &file_obj, &rows_obj, &row_size, &dims_obj, &names_obj, &select, &type_of,
                        &keeper, &convert))
    return nullptr;
  if (!bound()) return nullptr;
  if (!address(file_obj)) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "mapped_views(): the file is closed");
    return nullptr;
  }
  Table table;
  std::vector<size_t> rows;
  if (!table.open(rows_obj, row_size, dims_obj, names_obj) || !selection(select, table, rows)) return nullptr;
  Types types(type_of);
  std::vector<PyObject *> values(rows.size(), nullptr);
  std::vector<npy_intp> shape;
  zt_status status = ZT_OK;
  for (size_t k = 0; k < rows.size() && status == ZT_OK; ++k) {
    const zt_object_row row = table.row(rows[k]);
    if (!row.dense || row.data_component == UINT64_MAX || !table.shape_ok(row)) {
      drop(values);
      PyErr_Format(PyExc_ValueError, "mapped_views reads dense objects; %R is not a dense tensor", table.name(rows[k]));
      return nullptr;
    }
    ElementType *type = types.of(row);
    if (!type) {
      drop(values);
      return nullptr;
    }
    const void *p = nullptr;
    size_t len = 0;
    zt_status st = api.view(row.object, static_cast<size_t>(row.data_component), &p, &len);
    size_t each = 0;
    if (st == ZT_E_NOT_ZERO_COPY) continue;
    if (st != ZT_OK) {
      status = st;
      break;
    }
    if (!shape_of(table, row, shape) || !bytes_of(shape, type->itemsize, each) || each != len) continue;
    values[k] = view_of(*type, static_cast<int>(shape.size()), shape.data(), const_cast<void *>(p), keeper, false);
    if (values[k] && convert != Py_None) {
      PyObject *array = values[k];
      values[k] = PyObject_CallFunctionObjArgs(convert, array, type->zt_type, table.name(rows[k]), nullptr);
      Py_DECREF(array);
    }
    if (!values[k]) {
      drop(values);
      return nullptr;
    }
  }
  PyObject *d = as_dict(table, rows, values);
  if (!d) return nullptr;
  return Py_BuildValue("(Ni)", d, static_cast<int>(status));
}

PyMethodDef methods[] = {
    {"bind", bind, METH_VARARGS,
     "bind(object_table, read_many, free, component, view, read): the library's functions."},
    {"object_table", object_table, METH_O,
     "object_table(file) -> (rows, row_size, names, dims), or a zt_status on failure."},
    {"read_dense", read_dense, METH_VARARGS,
     "read_dense(file, rows, row_size, dims, names, select, type_of, split) -> (dict, failed)."},
    {"mapped_views", mapped_views, METH_VARARGS,
     "mapped_views(file, rows, row_size, dims, names, select, type_of, keeper, convert) -> (dict, status)."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT,
                      "ztensor._ext",
                      "The per-tensor work of ztensor's loads in C++ (see bindings/python/README.md).",
                      -1,
                      methods,
                      nullptr,
                      nullptr,
                      nullptr,
                      nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__ext() {
  import_array();  // returns NULL with an ImportError when numpy's C API is missing
  PyObject *m = PyModule_Create(&module);
  if (!m) return nullptr;
  if (PyModule_AddIntConstant(m, "ROW_SIZE", static_cast<long>(sizeof(zt_object_row))) != 0) {
    Py_DECREF(m);
    return nullptr;
  }
  return m;
}
