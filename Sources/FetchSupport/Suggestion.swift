/// "Did you mean ...?" for mistyped names (subcommands, policies, options).
package enum Suggestion {
  /// The optimal-string-alignment distance between `a` and `b`:
  /// insertions, deletions, substitutions and swaps of two adjacent Unicode
  /// scalars, each costing 1 (`rnu` → `run` is 1).
  ///
  /// - Complexity: O(|a|·|b|) time and memory.
  package static func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
    for i in 0...a.count { d[i][0] = i }
    for j in 0...b.count { d[0][j] = j }
    for i in 1...a.count {
      for j in 1...b.count {
        d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1) }
      }
    }
    return d[a.count][b.count]
  }

  /// The candidate closest to `name` (case-insensitive), when it is close
  /// enough to be a typo: at most 1 edit for names of up to 4 characters,
  /// 2 up to 8, else 3; or when `name` is a prefix of exactly one
  /// candidate. Ties go to the earlier candidate; `nil` when nothing fits.
  ///
  ///     Suggestion.closest(to: "rnu", among: ["run", "report"])  // "run"
  package static func closest(to name: String, among candidates: [String]) -> String? {
    let n = name.lowercased()
    guard !n.isEmpty else { return nil }
    let limit = n.count <= 4 ? 1 : n.count <= 8 ? 2 : 3
    var best: (String, Int)? = nil
    for c in candidates {
      let d = editDistance(n, c.lowercased())
      if d <= limit, d < (best?.1 ?? .max) { best = (c, d) }
    }
    if let best { return best.0 }
    let prefixed = candidates.filter { $0.lowercased().hasPrefix(n) }
    return prefixed.count == 1 ? prefixed[0] : nil
  }

  /// `" Did you mean 'x'?"`, or empty.
  package static func didYouMean(_ name: String, among candidates: [String]) -> String {
    closest(to: name, among: candidates).map { " Did you mean '\($0)'?" } ?? ""
  }
}
