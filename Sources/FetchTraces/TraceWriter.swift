import FetchSupport

/// Writes users to a canonical trace file, atomically (see ``AtomicTextFile``).
///
///     let w = try TraceWriter(path: "out.csv", comments: ["source: ..."])
///     try w.write(user)
///     try w.commit()
public final class TraceWriter {
  private let file: AtomicTextFile

  /// Creates the file and writes `#` comment lines, then the header.
  public init(path: String, comments: [String] = []) throws {
    file = try AtomicTextFile(path: path)
    for c in comments {
      for l in c.split(separator: "\n", omittingEmptySubsequences: false) {
        try file.write("# " + l + "\n")
      }
    }
    try file.write(traceHeader + "\n")
  }

  /// Appends one user's block: `begin`, the events, `end`.
  ///
  /// - Precondition: `user._checkInvariants()` holds.
  public func write(_ user: UserTrace) throws {
    let u = CSV.field(user.user)
    var out = ""
    out.reserveCapacity(64 * (user.events.count + 2))
    out += "\(u),\(CSV.number(user.start)),begin,,\(CSV.field(user.timeZone.description))\n"
    let apps = user.apps.map(CSV.field)
    for e in user.events {
      out += u
      out += ","
      out += CSV.number(e.time)
      out += ","
      out += e.kind.description
      out += ","
      if e.app >= 0 { out += apps[Int(e.app)] }
      out += ","
      switch e.kind {
      case .open, .wake, .battery: out += CSV.number(e.value)
      case .network: out += e.network?.description ?? "offline"
      case .update: if e.value > 0 { out += CSV.number(e.value) }
      case .chargeStart, .chargeEnd: break
      case .location:
        if let c = e.location {
          out += c.transition.description
          if c.region >= 0 { out += ":" + user.regions[Int(c.region)] }
        }
      }
      out += "\n"
      if out.utf8.count > 1 << 16 {
        try file.write(out)
        out.removeAll(keepingCapacity: true)
      }
    }
    out += "\(u),\(CSV.number(user.end)),end,,\n"
    try file.write(out)
  }

  /// Finishes the file and moves it into place.
  public func commit() throws { try file.commit() }
}
