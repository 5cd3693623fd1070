/* What ztensor-sys declares: the C ABI headers, without DLPack (whose types
 * belong to DLPack's own crates) and without the C++ wrapper. */
#include "ztensor.h"
#include "ztensor_composite.h"
#include "ztensor_io.h"
#include "ztensor_set.h"
