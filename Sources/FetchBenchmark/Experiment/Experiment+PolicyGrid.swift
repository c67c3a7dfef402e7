import FetchModels
import FetchSimulation
import FetchSupport
import FetchTraces
import Foundation

/// Expands brace groups: `p{a,b}q` → `paq`, `pbq`; several groups give the
/// Cartesian product with the leftmost group varying slowest; groups nest
/// (`{x,y{1,2}}` → `x`, `y1`, `y2`). A group without a comma is its own
/// single alternative; `{}` is one empty alternative.
///
/// - Throws: ``ExperimentError`` for an unbalanced brace, or when the result
///   would have more than `limit` strings.
/// - Complexity: O(output size).
package func expandBraces(_ s: String, limit: Int = 10_000) throws -> [String] {
  let out = try expand(Array(s), whole: s, limit: max(0, limit), level: 0)
  return out.map { String($0) }
}

/// Deepest accepted brace nesting (and longest run of groups) in a policy
/// string; bounds the recursion.
let maxBraceDepth = 64

/// A pattern as messages quote it: in full up to 80 characters, else its
/// first 80 and its length, so a refusal never echoes a whole long pattern.
func patternExcerpt(_ s: String) -> String {
  s.count <= 80 ? "'\(s)'" : "'\(s.prefix(80))…' (\(s.utf8.count) bytes)"
}

private func expand(_ c: [Character], whole: String, limit: Int, level: Int) throws -> [[Character]] {
  guard let open = c.firstIndex(where: { $0 == "{" || $0 == "}" }) else { return [c] }
  guard level < maxBraceDepth else {
    throw ExperimentError(.badPolicyPattern, "\(patternExcerpt(whole)) nests or chains more than \(maxBraceDepth) brace groups")
  }
  guard c[open] == "{" else { throw ExperimentError(.badPolicyPattern, "unbalanced '}' in \(patternExcerpt(whole))") }
  // The matching close and the top-level commas inside.
  var depth = 0
  var close: Int?
  var cuts: [Int] = []
  for i in open..<c.count {
    switch c[i] {
    case "{": depth += 1
    case "}":
      depth -= 1
      if depth == 0 { close = i }
    case "," where depth == 1: cuts.append(i)
    default: break
    }
    if close != nil { break }
  }
  guard let close else { throw ExperimentError(.badPolicyPattern, "unbalanced '{' in \(patternExcerpt(whole))") }
  let prefix = Array(c[..<open])
  var alternatives: [[Character]] = []
  var from = open + 1
  for cut in cuts + [close] {
    alternatives += try expand(Array(c[from..<cut]), whole: whole, limit: limit, level: level + 1)
    guard alternatives.count <= limit else {
      throw ExperimentError(.badPolicyPattern, "\(patternExcerpt(whole)) expands to more than \(limit) policies")
    }
    from = cut + 1
  }
  let suffixes = try expand(Array(c[(close + 1)...]), whole: whole, limit: limit, level: level + 1)
  guard alternatives.count * suffixes.count <= limit else {
    throw ExperimentError(.badPolicyPattern, "\(patternExcerpt(whole)) expands to more than \(limit) policies")
  }
  var out: [[Character]] = []
  out.reserveCapacity(alternatives.count * suffixes.count)
  for a in alternatives {
    for s in suffixes { out.append(prefix + a + s) }
  }
  return out
}
