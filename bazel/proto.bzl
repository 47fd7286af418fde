"""One rule chain for every .proto: the system protoc + grpc_cpp_plugin, yielding a cc_library.

    sharedos_proto_library(
        name = "protocol",            # the cc_library (messages, and gRPC stubs when grpc = True)
        srcs = ["execution.proto"],
        deps = ["//proto/sharedos/protocol/v1:protocol"],
        grpc = True,
    )

The import root is `proto/`: a file proto/sharedos/x/v1/y.proto is imported as
"sharedos/x/v1/y.proto" and its header is included as "sharedos/x/v1/y.pb.h".
Besides the cc_library, the macro defines `<name>_protos` (the transitive .proto sources, used
by dependants and by the freeze check) and `<name>_descriptor_set` (a FileDescriptorSet with
imports, source info stripped).
"""

_PROTO_ROOT = "proto"

def _gen_name(src, suffix):
    return src[:-len(".proto")] + suffix

def sharedos_proto_library(name, srcs, deps = [], grpc = False, visibility = None, testonly = False):
    pkg = native.package_name()
    if not pkg.startswith(_PROTO_ROOT + "/") and pkg != _PROTO_ROOT:
        fail("sharedos_proto_library must live under //%s" % _PROTO_ROOT)
    out_prefix = pkg[len(_PROTO_ROOT) + 1:]

    native.filegroup(
        name = name + "_protos",
        srcs = srcs + [d + "_protos" for d in deps],
        visibility = visibility,
        testonly = testonly,
    )

    hdrs = [_gen_name(s, ".pb.h") for s in srcs]
    ccs = [_gen_name(s, ".pb.cc") for s in srcs]
    if grpc:
        hdrs += [_gen_name(s, ".grpc.pb.h") for s in srcs]
        ccs += [_gen_name(s, ".grpc.pb.cc") for s in srcs]

    plugin = ""
    if grpc:
        plugin = ("--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin " +
                  "--grpc_out=$(GENDIR)/%s " % _PROTO_ROOT)
    native.genrule(
        name = name + "_gen",
        srcs = [name + "_protos"],
        outs = hdrs + ccs,
        cmd = ("protoc -I%s --cpp_out=$(GENDIR)/%s %s" % (_PROTO_ROOT, _PROTO_ROOT, plugin) +
               " ".join(["%s/%s" % (pkg, s) for s in srcs])),
        testonly = testonly,
        visibility = ["//visibility:private"],
    )

    native.genrule(
        name = name + "_descriptor_set",
        srcs = [name + "_protos"],
        outs = [name + ".descriptor_set.pb"],
        cmd = ("protoc -I%s --include_imports --descriptor_set_out=$@ " % _PROTO_ROOT +
               " ".join(["%s/%s" % (pkg, s) for s in srcs])),
        testonly = testonly,
        visibility = visibility,
    )

    native.cc_library(
        name = name,
        srcs = ccs,
        hdrs = hdrs,
        strip_include_prefix = "/" + _PROTO_ROOT,
        deps = deps + ["@system//:grpc" if grpc else "@system//:protobuf"],
        # Generated code is not held to the project's -Werror.
        copts = ["-Wno-error", "-w"],
        testonly = testonly,
        visibility = visibility,
    )
