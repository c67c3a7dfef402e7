import Foundation

extension TraceReader {
  /// Longest user id or app name a trace may hold, in bytes of UTF-8: 256.
  /// Android package names and iOS bundle ids are at most 255 and 155
  /// characters, and every output row repeats the name, so a longer one is
  /// refused rather than copied into every fetch and open row.
  package static let maxNameBytes = 256
  /// Longest region id of a `location` row, in bytes of UTF-8.
  package static let maxRegionBytes = 64

  /// Why the user id or app name `s` (of `bytes` bytes, already valid
  /// UTF-8) cannot be in a trace, or nil: longer than ``maxNameBytes`` or
  /// holding a control character other than a tab or line break (C0, DEL,
  /// C1: written raw into every output CSV). Tabs and line breaks are
  /// quoted by every CSV writer (RFC 4180), so a name may hold them.
  static func nameProblem(_ s: String, bytes: Int, what: String) -> String? {
    if bytes > maxNameBytes {
      return "\(what) of \(bytes) bytes is longer than \(maxNameBytes) (the longest a trace may hold): '\(escapedName(String(s.prefix(40))))...'"
    }
    if s.unicodeScalars.contains(where: { ($0.value < 0x20 && !"\t\n\r".unicodeScalars.contains($0)) || (0x7F...0x9F).contains($0.value) }) {
      return "\(what) '\(escapedName(String(s.prefix(80))))' contains a control character"
    }
    return nil
  }

  /// What a first line that is not the trace header looks like, as a
  /// suffix for the error: a UbiqLog export's header (import-ubiqlog), or
  /// another header of named columns, e.g. an app-usage event log
  /// (import-events); empty for anything else.
  static func headerHint(_ header: Bytes) -> String {
    let text = String(decoding: header.prefix(4096), as: UTF8.self)
    let columns = text.split(whereSeparator: { $0 == "," || $0 == "\t" || $0 == ";" }).map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    let names = columns.map { $0.lowercased() }
    guard names.count >= 2 else { return "" }
    if names.contains("process_name") && names.contains("user_dir") {
      return "; this looks like a UbiqLog export: convert it with 'fetchlab import-ubiqlog' (docs/own-data.md)"
    }
    let isName = { (s: String) in s.first.map { $0.isLetter || $0 == "_" } ?? false }
    guard names.allSatisfy(isName) else { return "" }
    let shown = escapedName(String(columns.joined(separator: ", ").prefix(120)))
    return "; found the columns \(shown), which look like an app-usage event log's: convert it with "
      + "'fetchlab import-events' (docs/own-data.md)"
  }

  /// The transitions' names as bytes, for ``locationValue(_:_:)``.
  private static let transitionBytes = LocationTransition.allCases.map { (Array($0.description.utf8), $0) }

  /// Parses a `location` value: `significant`, `enter`, `exit`, or
  /// `enter:<region>` / `exit:<region>` (a region id of 1–64 bytes of
  /// UTF-8 without a comma, quote or control character; quoting is not
  /// needed).
  ///
  /// A value whose transition is spelled exactly and whose region was read
  /// before (the common case) is decoded from its bytes; any other goes
  /// through ``locationText(_:_:)``, which checks it as text and adds the
  /// region.
  func locationValue(_ b: Bytes, _ u: inout UserState) throws -> LocationChange {
    let colon = b.firstIndex(of: UInt8(ascii: ":"))
    let name = colon.map { Bytes(rebasing: b[..<$0]) } ?? b
    if let t = TraceReader.transitionBytes.first(where: { TraceReader.equal(name, $0.0) })?.1 {
      guard let c = colon else { return LocationChange(t) }
      if t != .significant {
        let id = Bytes(rebasing: b[(c + 1)...])
        if let k = u.regionTable.find(id, hash: NameTable.hash(id)) {
          return LocationChange(t, region: u.regionOfSpelling[Int(k)])
        }
      }
    }
    return try locationText(b, &u)
  }

  /// ``locationValue(_:_:)`` checked as text: the transition, the region
  /// id (not empty, at most ``maxRegionBytes`` bytes, no comma, quote or
  /// control character).
  private func locationText(_ b: Bytes, _ u: inout UserState) throws -> LocationChange {
    let whole = try text(b, "value")
    let parts = whole.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    guard let t = LocationTransition.allCases.first(where: { $0.description == parts[0] }) else {
      throw fail("value", "unknown location change '\(escapedName(String(whole.prefix(80))))' (expected significant, enter, exit, enter:<region>, exit:<region>)")
    }
    guard parts.count == 2 else { return LocationChange(t) }
    guard t != .significant else {
      throw fail("value", "'significant' takes no region id (got '\(whole.prefix(80))'); regions go with enter or exit")
    }
    var id = String(parts[1])
    guard !id.isEmpty else { throw fail("value", "empty region id in '\(whole)' (write '\(t)' alone for no region)") }
    let n = id.utf8.count
    guard n <= TraceReader.maxRegionBytes else {
      throw fail("value", "region id of \(n) bytes is longer than \(TraceReader.maxRegionBytes)")
    }
    guard !id.unicodeScalars.contains(where: { $0 == "," || $0 == "\"" || $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
    else {
      throw fail("value", "region id '\(escapedName(id))' contains a comma, quote, line break or other control character")
    }
    let r: Int32
    if let known = u.regionIndex[id] {
      r = known
    } else {
      r = Int32(u.regions.count)
      u.regions.append(id)
      u.regionIndex[id] = r
    }
    id.withUTF8 { bytes in
      let h = NameTable.hash(bytes)
      if u.regionTable.find(bytes, hash: h) == nil {
        _ = u.regionTable.add(bytes, hash: h)
        u.regionOfSpelling.append(r)
      }
    }
    return LocationChange(t, region: r)
  }

  /// The index of the app named by `b` in `u.apps`, adding it if new (a
  /// new name is checked: valid UTF-8, at most ``maxNameBytes``, no control
  /// character).
  ///
  /// - Complexity: O(1) expected probes of ``NameTable`` plus O(length).
  @inline(__always) func app(_ b: Bytes, _ u: inout UserState) throws -> Int32 {
    let h = NameTable.hash(b)
    if let i = u.appTable.find(b, hash: h) { return i }
    let name = try text(b, "app")
    if let problem = TraceReader.nameProblem(name, bytes: b.count, what: "app name") { throw fail("app", problem) }
    u.apps.append(name)
    return u.appTable.add(b, hash: h)
  }
}
