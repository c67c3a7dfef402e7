// swift-tools-version: 6.0
// FetchLab: replay phone usage traces against background-fetch policies and
// score staleness at app open against energy and cellular data.
//
// Layers, one way only:
//   FetchSupport -> FetchTraces -> FetchWorld, FetchModels -> FetchSimulation
//   -> FetchBenchmark -> FetchReports -> fetchlab (CLI)
// FetchWorld is the physics (world parameters, the radio model, the content
// model, sessions) and FetchModels the learned models; neither uses the
// other. FetchLinearAlgebra sits beside the bottom, used from FetchModels up.
// Results flow the same way: FetchBenchmark runs the replays, owns the result
// schema (the CSV column sets) and writes result directories; FetchReports
// reads finished ones (scores, charts, report.html, notebooks).
// Two modules touch C, each through its own system library: FetchSupport
// hashes with libcrypto's SHA-256 (CCrypto; hardware SHA extensions) for the
// input hashes, FetchLinearAlgebra solves with OpenBLAS and LAPACKE (CBLAS,
// CLAPACKE) for the model fits.
import PackageDescription

let package = Package(
  name: "FetchLab",
  products: [
    .executable(name: "fetchlab", targets: ["fetchlab"]),
    .library(name: "FetchLab", targets: [
      "FetchTraces", "FetchWorld", "FetchModels", "FetchSimulation", "FetchBenchmark",
      "FetchReports",
    ]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CBLAS", pkgConfig: "openblas",
      providers: [.apt(["libopenblas-dev"])]),
    .systemLibrary(
      name: "CLAPACKE", pkgConfig: "lapacke",
      providers: [.apt(["liblapacke-dev"])]),
    // The system's libcrypto, for SHA-256 only (FetchSupport/SHA256Context.swift).
    .systemLibrary(
      name: "CCrypto", pkgConfig: "libcrypto",
      providers: [.apt(["libssl-dev"])]),
    .target(name: "FetchLinearAlgebra", dependencies: ["FetchSupport", "CBLAS", "CLAPACKE"]),
    // Helpers every layer shares (CSV reading and writing, the line reader,
    // atomic files, the located JSON reader, hashing, SplitMix64, quantiles,
    // parallelMap, searches): `package` access, not in the
    // library's public API. The bottom layer: no module of ours below it.
    .target(name: "FetchSupport", dependencies: ["CCrypto"]),
    .target(name: "FetchTraces", dependencies: ["FetchSupport"]),
    .target(name: "FetchWorld", dependencies: ["FetchSupport", "FetchTraces"]),
    .target(name: "FetchModels", dependencies: ["FetchSupport", "FetchTraces", "FetchLinearAlgebra"]),
    .target(name: "FetchSimulation", dependencies: ["FetchSupport", "FetchTraces", "FetchWorld", "FetchModels"]),
    .target(
      name: "FetchBenchmark",
      dependencies: ["FetchSupport", "FetchTraces", "FetchWorld", "FetchModels", "FetchSimulation"]),
    .target(
      name: "FetchReports",
      dependencies: ["FetchSupport", "FetchTraces", "FetchWorld", "FetchModels", "FetchSimulation", "FetchBenchmark"]),
    .executableTarget(
      name: "fetchlab",
      dependencies: [
        "FetchSupport", "FetchTraces", "FetchLinearAlgebra", "FetchWorld", "FetchModels", "FetchSimulation", "FetchBenchmark",
        "FetchReports",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
      ]),
    // Scratch directories for the test suites, removed when the tests exit.
    .target(name: "FetchTestSupport", path: "Sources/FetchTestSupport"),
    .testTarget(name: "FetchSupportTests", dependencies: ["FetchSupport"]),
    .testTarget(name: "FetchLinearAlgebraTests", dependencies: ["FetchLinearAlgebra"]),
    .testTarget(name: "FetchTracesTests", dependencies: ["FetchSupport", "FetchTraces", "FetchTestSupport"]),
    .testTarget(name: "FetchWorldTests", dependencies: ["FetchSupport", "FetchWorld", "FetchTraces", "FetchTestSupport"]),
    .testTarget(name: "FetchModelsTests", dependencies: ["FetchSupport", "FetchModels", "FetchTraces", "FetchTestSupport"]),
    .testTarget(name: "FetchSimulationTests", dependencies: ["FetchSupport", "FetchSimulation", "FetchWorld", "FetchModels", "FetchTraces"]),
    .testTarget(
      name: "FetchBenchmarkTests",
      dependencies: [
        "FetchSupport", "FetchBenchmark", "FetchSimulation", "FetchWorld", "FetchModels", "FetchTraces", "FetchTestSupport",
      ],
      resources: [.copy("Fixtures")]),
    .testTarget(
      name: "FetchReportsTests",
      dependencies: [
        "FetchSupport", "FetchReports", "FetchBenchmark", "FetchSimulation", "FetchWorld", "FetchModels", "FetchTraces",
        "FetchTestSupport",
      ],
      resources: [.copy("Golden")]),
    .testTarget(name: "FetchLabCLITests", dependencies: ["FetchSupport", "fetchlab", "FetchBenchmark", "FetchTraces", "FetchTestSupport"]),
  ]
)
