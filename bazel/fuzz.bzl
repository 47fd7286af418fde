"""`sharedos_fuzz_target`: a libFuzzer target and its seed corpus, beside the code it fuzzes.

    sharedos_fuzz_target(
        name = "canonical_json_fuzzer",   # the binary; its seeds are fuzz/corpus/<name>/
        srcs = ["canonical_json_fuzzer.cc"],
        deps = ["//common/json:canonical_json"],
    )

The source defines `LLVMFuzzerTestOneInput`. Built with `--config=fuzz` (clang, ASan, UBSan) the
binary links libFuzzer's main; in any other build it links `//bazel:fuzz_replay_main`, which runs
the input files named on its command line once each, so the seeds also replay under gcc.
Targets are tagged `fuzz` and `manual`: `bazel test //...` does not build them; tools/fuzz.sh does.
"""

def sharedos_fuzz_target(name, srcs, deps = [], data = [], copts = []):
    native.cc_binary(
        name = name,
        srcs = srcs,
        copts = copts,
        deps = deps + select({
            "//bazel:fuzz_build": [],
            "//conditions:default": ["//bazel:fuzz_replay_main"],
        }),
        linkopts = select({
            "//bazel:fuzz_build": ["-fsanitize=fuzzer"],
            "//conditions:default": [],
        }),
        data = data,
        tags = ["fuzz", "manual"],
        testonly = True,
    )
    native.filegroup(
        name = name + "_corpus",
        srcs = native.glob(["corpus/%s/**" % name]),
        tags = ["fuzz", "manual"],
        testonly = True,
    )
