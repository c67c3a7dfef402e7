import Foundation
import FetchTestSupport
import Testing

/// The library's public API (docs/library-api.md): small, documented, and
/// enough for the embedding example, which is type-checked here as a package
/// that depends on FetchLab sees the modules (no `-package-name`, so
/// `package` declarations are invisible to it).
@Suite("library API")
struct LibraryAPITests {
  /// Lines that declare something `public` (after any attributes).
  static func publicDeclarations() throws -> [(file: String, line: Int, text: String, documented: Bool)] {
    let sources = packageRoot + "/Sources"
    var out: [(String, Int, String, Bool)] = []
    let files = FileManager.default.enumerator(atPath: sources)!.compactMap { $0 as? String }
      .filter { $0.hasSuffix(".swift") }.sorted()
    for f in files {
      let lines = try String(contentsOfFile: sources + "/" + f, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
      for (i, raw) in lines.enumerated() {
        var words = raw.split(separator: " ")[...]
        while let w = words.first, w.hasPrefix("@") { words = words.dropFirst() }
        guard words.first == "public" else { continue }
        var j = i - 1
        while j >= 0, lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("@") { j -= 1 }
        let documented = j >= 0 && lines[j].trimmingCharacters(in: .whitespaces).hasPrefix("///")
        out.append((f, i + 1, raw.trimmingCharacters(in: .whitespaces), documented))
      }
    }
    return out
  }

  @Test("at most 360 public declarations, each with a doc comment")
  func smallDocumentedAPI() throws {
    let decls = try Self.publicDeclarations()
    let undocumented = decls.filter { !$0.documented }.map { "\($0.file):\($0.line): \($0.text)" }
    #expect(undocumented.isEmpty, "public without a doc comment:\n\(undocumented.joined(separator: "\n"))")
    #expect(decls.count <= 360, "\(decls.count) public declarations; widening the API is a decision (docs/library-api.md)")
    // The scan sees the API (the policy protocol, the registry, replay, experiments).
    let texts = decls.map(\.text)
    for needle in ["public protocol FetchPolicy", "public protocol PolicyFamily", "public enum PolicyRegistry",
                   "public func replayUser(", "public func runExperiment(", "public final class TraceReader"] {
      #expect(texts.contains { $0.hasPrefix(needle) }, "\(needle) is not public")
    }
  }

  /// Type-checks `source` as `main.swift` of a client package; returns the
  /// exit status and the compiler's messages.
  static func typecheck(_ source: String) throws -> (status: Int32, messages: String) {
    let dir = Scratch.directory("library-api")
    try source.write(toFile: dir + "/main.swift", atomically: true, encoding: .utf8)
    // The modules the build wrote, beside the fetchlab executable.
    let modules = CLI.executable.deletingLastPathComponent().appendingPathComponent("Modules").path
    var args = ["swiftc", "-typecheck", dir + "/main.swift", "-I", modules,
                "-I", packageRoot + "/Sources/CBLAS", "-I", packageRoot + "/Sources/CLAPACKE",
                "-I", packageRoot + "/Sources/CCrypto"]
    // The C headers of the system libraries (as SwiftPM finds them, with pkg-config).
    let pkg = Process()
    pkg.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    pkg.arguments = ["pkg-config", "--cflags-only-I", "openblas", "lapacke", "libcrypto"]
    let pipe = Pipe()
    pkg.standardOutput = pipe
    try pkg.run()
    let flags = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    pkg.waitUntilExit()
    for f in flags.split(whereSeparator: \.isWhitespace) { args += ["-Xcc", String(f)] }
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    p.arguments = args
    let err = Pipe()
    p.standardError = err
    p.standardOutput = err
    try p.run()
    let messages = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    p.waitUntilExit()
    return (p.terminationStatus, messages)
  }

  static func example() throws -> String {
    let page = try String(contentsOfFile: packageRoot + "/docs/library-api.md", encoding: .utf8)
    let begin = try #require(page.range(of: "<!-- example:begin -->\n```swift\n"))
    let end = try #require(page.range(of: "```\n<!-- example:end -->", range: begin.upperBound..<page.endIndex))
    return String(page[begin.upperBound..<end.lowerBound])
  }

  @Test("the embedding example of docs/library-api.md compiles against the public API only")
  func embeddingExample() throws {
    let example = try Self.example()
    let ok = try Self.typecheck(example)
    #expect(ok.status == 0, "the example does not type-check:\n\(ok.messages)")
    // The same client cannot reach `package` declarations: the check has teeth.
    let leak = try Self.typecheck(example + "\nprint(PolicyRegistry.reference())\n")
    #expect(leak.status != 0)
    #expect(leak.messages.contains("'package' protection level"), "\(leak.messages)")
  }

  @Test("docs/architecture.md's policy in another package is the embedding example's family, declared by one FamilyInfo")
  func architectureFamilyIsTheExample() throws {
    let page = try String(contentsOfFile: packageRoot + "/docs/architecture.md", encoding: .utf8)
    let section = try #require(page.range(of: "## Adding a policy\n"))
    let begin = try #require(page.range(of: "```swift\n", range: section.upperBound..<page.endIndex))
    let end = try #require(page.range(of: "  // parse, describe, makePolicies", range: begin.upperBound..<page.endIndex))
    let shown = String(page[begin.upperBound..<end.lowerBound])
    #expect(shown.hasPrefix("enum MyAfterOpenFamily: PolicyFamily {\n  static let info = FamilyInfo("))
    // The family's whole description is the one value: the example declares no other static property.
    let example = try Self.example()
    #expect(example.contains(shown), "architecture.md's family is not the compiled example's:\n\(shown)")
    let family = try #require(example.range(of: "enum MyAfterOpenFamily"))
    let declaration = example[family.lowerBound...]
    let head = declaration[..<(declaration.range(of: "static func parse")?.lowerBound ?? declaration.endIndex)]
    #expect(head.components(separatedBy: "static ").count == 2, "\(head)")
    // Without its info the family does not conform: the requirement is public.
    let bare = try Self.typecheck(example.replacingOccurrences(of: "  static let info = FamilyInfo(", with: "  static let unused = FamilyInfo("))
    #expect(bare.status != 0)
    #expect(bare.messages.contains("does not conform to protocol 'PolicyFamily'"), "\(bare.messages)")
  }
}
