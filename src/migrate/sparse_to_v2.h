// The data rules the v2 sparse profiles add to spec 1.2's, checked on a
// sparse object before it is copied into a v2 writer (zt migrate --to 2,
// zt_writer_copy_object): zt.sparse_csr/1 wants each row's column indices
// strictly increasing, zt.sparse_coo/1 unique coordinates; 1.2 allows
// unsorted and duplicate entries (last wins). Such an object has no v2 form
// as it stands, and is refused rather than written into a file a reader
// would refuse when it assembles the object.
#pragma once

#include "manifest/model.h"

namespace zt {

class Reader;
class Writer;

// For a sparse_csr / sparse_coo object (either generation's id) going to a
// v2 writer: reads its index components (8 bytes an entry, as a strict
// verify does) and throws ZT_E_SPARSE_INDEX, "rejected (LayoutData)",
// naming object, part and entries, when a rule above fails. Other objects
// and 1.2 writers: nothing.
void check_sparse_data_for_v2(const Reader &in, const Object &o, const Writer &w);

}  // namespace zt
