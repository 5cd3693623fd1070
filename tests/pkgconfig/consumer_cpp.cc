// The installed C++ wrapper from an outside program (pkg-config only).
#include <iostream>
#include <vector>
#include <ztensor.hpp>

int main(int argc, char **argv) {
  if (argc != 2) {
    std::cerr << "usage: consumer_cpp FILE.zt\n";
    return 2;
  }
  try {
    {
      ztensor::Writer w(argv[1]);
      w.add<double>("x", {3}, std::vector<double>{0.5, 1.5, 2.5});
      w.finish();
    }
    ztensor::File f(argv[1]);
    for (ztensor::Object o : f) {
      if (o.name() != "x" || o.read_as<double>("data") != std::vector<double>{0.5, 1.5, 2.5}) {
        std::cerr << "unexpected content\n";
        return 1;
      }
    }
    f.get("missing");  // must throw
    std::cerr << "a missing object did not throw\n";
    return 1;
  } catch (const ztensor::Error &e) {
    if (e.status() != ZT_E_NOT_FOUND) {
      std::cerr << "error: " << e.what() << "\n";
      return 1;
    }
  }
  std::cout << "pkg-config C++ consumer OK\n";
  return 0;
}
