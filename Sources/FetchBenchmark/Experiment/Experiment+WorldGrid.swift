import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld
import Foundation

/// World-parameter grids: a `world` value written as a `{a,b}` grid makes
/// every dataset one dataset per grid point, each with its own world
/// (``Experiment/Dataset/world``).
extension Experiment {
  /// The experiment's own world from the `world` object at `line`, and the
  /// datasets: as given, or each once per grid point of a world grid
  /// (`<name>.<parameter>-<value>...`, with its world).
  ///
  /// - Throws: ``TraceFormatError`` naming the file, line and parameter.
  static func applyWorld(_ json: LocatedJSON, line: Int, to datasets: [Dataset], file: String) throws
    -> (WorldParameters, [Dataset])
  {
    var world = WorldParameters()
    let axes = try worldGrid(json, prefix: "", file: file)
    guard !axes.isEmpty else {
      try world.apply(json: json, file: file)
      return (world, datasets)
    }
    func error(_ message: String) -> TraceFormatError {
      TraceFormatError(file: file, line: line, field: "world", message: message)
    }
    // Sized before anything is built (each axis is bounded, their product is not).
    let points = axes.reduce(datasets.count) { n, axis in
      let (m, overflow) = n.multipliedReportingOverflow(by: axis.values.count)
      return overflow ? Int.max : m
    }
    guard points <= maxConfigurations else {
      throw error(
        "the world grid gives \(points == Int.max ? "too many" : String(points)) (dataset, world) combinations; "
          + "at most \(maxConfigurations)")
    }
    // The experiment's own world: the overrides without the grid.
    let empty = LocatedJSON(value: .object([]), line: json.line)
    try world.apply(json: axes.reduce(json) { replacing($0, at: $1.path[...], with: nil) ?? empty }, file: file)
    let combos = axes.reduce([[String]]([[]])) { acc, axis in acc.flatMap { c in axis.values.map { c + [$0] } } }
    let variants = try combos.map { values in
      var v = WorldParameters()
      try v.apply(json: withGrid(json, axes: axes, values: values), file: file)
      return (
        label: zip(axes, values).map { $0.name + "-" + nameSafe($1) }.joined(separator: "."),
        changed: zip(axes, values).map { $0.name + "=" + $1 }.joined(separator: "; "), world: v)
    }
    let expanded = try datasets.flatMap { d in
      try variants.enumerated().map { i, v in
        let name = d.name + "." + v.label
        guard isValidName(name) else {
          throw error("dataset name \(patternExcerpt(name)) of the world grid is not a valid name (at most 100 characters)")
        }
        return Dataset(
          name: name, source: d.source, world: v.world,
          worldPoint: WorldPoint(base: d.name, label: v.label, changed: v.changed, isReference: i == 0))
      }
    }
    if let dup = Dictionary(grouping: expanded, by: \.name).first(where: { $0.value.count > 1 }) {
      throw error("two grid points give the dataset name '\(dup.key)': the values differ only in characters a name cannot hold")
    }
    return (world, expanded)
  }

  /// The world grid's axes: string values with `{...}` groups, expanded
  /// as policy grids are (``expandBraces(_:limit:)``), with their dotted
  /// parameter names, in sorted key order (the order parameters apply in).
  static func worldGrid(_ json: LocatedJSON, prefix: String, file: String) throws
    -> [(name: String, path: [String], values: [String])]
  {
    guard case .object(let members) = json.value else { return [] }
    var out: [(name: String, path: [String], values: [String])] = []
    for m in members.sorted(by: { $0.key < $1.key }) {
      let name = prefix.isEmpty ? m.key : prefix + "." + m.key
      switch m.value.value {
      case .object:
        out += try worldGrid(m.value, prefix: name, file: file).map { ($0.name, [m.key] + $0.path, $0.values) }
      case .string(let text) where text.contains("{"):
        let values: [String]
        do {
          values = try expandBraces(text, limit: maxConfigurations)
        } catch {
          throw TraceFormatError(file: file, line: m.line, field: "world." + name, message: "\(error)")
        }
        out.append((name, [m.key], values))
      default: break
      }
    }
    return out
  }

  /// `json` with each grid axis's text replaced by one of its values, as
  /// the JSON scalar it spells (`true`/`false`, a number, else a string).
  static func withGrid(
    _ json: LocatedJSON, axes: [(name: String, path: [String], values: [String])], values: [String]
  ) -> LocatedJSON {
    var out = json
    for (axis, text) in zip(axes, values) {
      let scalar: LocatedJSON.Value =
        text == "true" ? .bool(true) : text == "false" ? .bool(false)
        : Double(text).map { $0.isFinite ? .number(text) : .string(text) } ?? .string(text)
      out = replacing(out, at: axis.path[...], with: scalar)!
    }
    return out
  }

  /// `json` with the value at `path` replaced by `v`, or removed (an
  /// emptied object goes too) when `v` is nil; nil when nothing is left.
  static func replacing(_ json: LocatedJSON, at path: ArraySlice<String>, with v: LocatedJSON.Value?) -> LocatedJSON? {
    guard let key = path.first, case .object(var members) = json.value,
      let i = members.firstIndex(where: { $0.key == key })
    else { return v.map { LocatedJSON(value: $0, line: json.line) } }
    if let inner = replacing(members[i].value, at: path.dropFirst(), with: v) {
      members[i].value = inner
    } else {
      members.remove(at: i)
    }
    return members.isEmpty && v == nil ? nil : LocatedJSON(value: .object(members), line: json.line)
  }

  /// `s` with characters a dataset name cannot hold replaced by `_`.
  static func nameSafe(_ s: String) -> String {
    String(String.UnicodeScalarView(s.unicodeScalars.map {
      $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) ? $0 : "_"
    }))
  }
}
