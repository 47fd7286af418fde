"""Repository rule exposing Debian's system libraries (under /usr) as cc_library targets.

Link flags are read from pkg-config at fetch time, so the build follows whatever Debian installed.
Headers live in /usr/include, which the compiler already searches; the few that sit in a
subdirectory (PostgreSQL's libpq) are symlinked into the repository and exported via `includes`.
"""

# target name -> (pkg-config modules, extra linkopts, include subdirectories of /usr/include)
_LIBRARIES = {
    "protobuf": (["protobuf"], [], []),
    "grpc": (["grpc++", "protobuf"], [], []),
    "grpc_reflection": (["grpc++", "protobuf"], ["-lgrpc++_reflection"], []),
    "absl": ([
        "absl_status",
        "absl_statusor",
        "absl_strings",
        "absl_str_format",
        "absl_synchronization",
        "absl_time",
        "absl_hash",
        "absl_raw_hash_set",
        "absl_flags",
        "absl_flags_parse",
        "absl_random_random",
    ], [], []),
    "sqlite3": (["sqlite3"], [], []),
    "openssl": (["openssl"], [], []),
    "libpq": (["libpq"], [], ["postgresql"]),
    "glog": (["libglog"], [], []),
    "gtest": (["gtest"], ["-lpthread"], []),
    "gtest_main": (["gtest_main", "gtest"], ["-lpthread"], []),
    "gmock": (["gmock", "gtest"], ["-lpthread"], []),
    "gmock_main": (["gmock_main", "gmock", "gtest"], ["-lpthread"], []),
    "benchmark": (["benchmark"], ["-lpthread"], []),
    "benchmark_main": (["benchmark"], ["-lbenchmark_main", "-lpthread"], []),
    "httplib": (["cpp-httplib", "openssl"], [], []),
    # Boost.Beast over Boost.Asio (header-only; Debian's libboost-dev), with OpenSSL for HTTPS:
    # the bounded HTTP server of the MCP front door and the console (common/http, ADR 0017).
    "beast": (["openssl"], ["-lpthread"], []),
    # Linear-time regular expressions for agent-supplied patterns.
    "re2": (["re2"], [], []),
    # Prometheus metrics and their HTTP exposer (common/metrics).
    "prometheus": (["prometheus-cpp-pull", "prometheus-cpp-core"], [], []),
    # JOSE (JWS verification, JWK import) for the identity provider's tokens (common/oidc,
    # ADR 0020); Debian's libcjose-dev, with jansson and OpenSSL's libcrypto.
    "cjose": (["cjose"], [], []),
    # Header-only.
    "nlohmann_json": ([], [], []),
    "valijson": ([], [], []),
}

# target name -> preprocessor definitions its users need (those pkg-config --cflags gives).
_DEFINES = {
    # Debian builds cpp-httplib with OpenSSL; its header declares the TLS classes only with this.
    "httplib": ["CPPHTTPLIB_OPENSSL_SUPPORT"],
}

def _pkg_config_libs(repository_ctx, modules):
    if not modules:
        return []
    result = repository_ctx.execute(["pkg-config", "--libs"] + modules)
    if result.return_code != 0:
        fail("pkg-config --libs %s failed (is the Debian -dev package installed? run tools/setup.sh): %s" %
             (" ".join(modules), result.stderr))
    return result.stdout.strip().split(" ")

def _system_libraries_impl(repository_ctx):
    build = ['package(default_visibility = ["//visibility:public"])', ""]
    for name, (modules, extra, subdirs) in _LIBRARIES.items():
        includes = []
        for subdir in subdirs:
            repository_ctx.symlink("/usr/include/" + subdir, "include/" + subdir)
            includes.append("include/" + subdir)
        linkopts = [flag for flag in _pkg_config_libs(repository_ctx, modules) + extra if flag]
        build.append("cc_library(")
        build.append("    name = %r," % name)
        if includes:
            build.append("    hdrs = glob([%s]),"
                         % ", ".join(['"%s/**/*.h"' % i for i in includes]))
            build.append("    includes = %r," % includes)
        build.append("    linkopts = %r," % linkopts)
        if name in _DEFINES:
            build.append("    defines = %r," % _DEFINES[name])
        build.append(")")
        build.append("")
    repository_ctx.file("WORKSPACE", 'workspace(name = "%s")\n' % repository_ctx.name)
    repository_ctx.file("BUILD", "\n".join(build))

system_libraries = repository_rule(
    implementation = _system_libraries_impl,
    local = True,
    environ = ["PKG_CONFIG_PATH"],
)
