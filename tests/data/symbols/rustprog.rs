// SPDX-License-Identifier: MIT
// Rust test target for demangling (legacy and v0 mangling); compiled by
// test-symbols at run time with rustc when it is installed.
mod inner {
    #[inline(never)]
    pub fn compute<T: std::fmt::Debug>(x: T) -> String {
        format!("{:?}", x)
    }
}

fn main() {
    println!("{}", inner::compute(42));
}
