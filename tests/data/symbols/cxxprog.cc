// SPDX-License-Identifier: MIT
// C++ test target for demangling: namespaces, templates, overloads,
// operators, lambdas, constructors.  Compiled by test-symbols at run time
// with g++; names are checked against c++filt.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace sfp_ns {
struct Widget {
	int v;
	explicit Widget(int x) : v(x) {}
	__attribute__((noinline)) int frob(int a) const { return v + a; }
	__attribute__((noinline)) int frob(const std::string &s) const { return v + (int)s.size(); }
	__attribute__((noinline)) bool operator<(const Widget &o) const { return v < o.v; }
};

template <typename T>
__attribute__((noinline)) T twice(T x) { return x + x; }
} // namespace sfp_ns

int main(int argc, char **)
{
	std::vector<sfp_ns::Widget> v;
	std::map<std::string, int> m;
	for (int i = 0; i < argc + 3; i++)
		v.emplace_back(i);
	m["a"] = v[0].frob(1) + v[1].frob(std::string("xy"));
	auto f = [&](int k) { return sfp_ns::twice(k) + sfp_ns::twice(1.5) > 0; };
	std::printf("%d %d %d\n", f(argc), (int)(v[0] < v[1]), m["a"]);
	return 0;
}
