import FetchModels
import FetchSupport
import FetchTraces
import FetchWorld

/// Named world variants: `"world_variants": [{"name": "reference"},
/// {"name": "aligned", "replay.timer_phase": "aligned"}, ...]` makes every
/// dataset one dataset per variant, `<dataset>.<variant>`, each replayed in
/// the experiment's `world` with the variant's overrides on top. The first
/// variant is the reference the others are compared with
/// (`robustness.csv`). Unlike a grid, variants change one assumption (or a
/// few together) at a time.
extension Experiment {
  /// The experiment's world and the datasets once per variant.
  ///
  /// - Throws: ``TraceFormatError`` naming the file, line and field.
  static func applyVariants(
    _ variants: LocatedJSON, base: LocatedJSON?, to datasets: [Dataset], file: String
  ) throws -> (WorldParameters, [Dataset]) {
    func error(_ line: Int, _ field: String, _ message: String) -> TraceFormatError {
      TraceFormatError(file: file, line: line, field: field, message: message)
    }
    if let base, try !worldGrid(base, prefix: "", file: file).isEmpty {
      throw error(base.line, "world", "a world grid and world_variants cannot be combined: put each grid value in a variant")
    }
    guard case .array(let items) = variants.value, !items.isEmpty else {
      throw error(variants.line, "world_variants", "expected a non-empty array of objects, each with a name")
    }
    var world = WorldParameters()
    if let base { try world.apply(json: base, file: file) }
    let reference = Set(world.overrides())
    var named: [(name: String, changed: String, world: WorldParameters)] = []
    for (i, item) in items.enumerated() {
      let field = "world_variants[\(i)]"
      guard case .object(let members) = item.value else { throw error(item.line, field, "expected an object") }
      guard let n = members.first(where: { $0.key == "name" }) else {
        throw error(item.line, field + ".name", "missing: every variant needs a name")
      }
      guard case .string(let name) = n.value.value else {
        throw error(n.line, field + ".name", "expected a string, got \(n.value.typeName)")
      }
      guard isValidName(name) else {
        throw error(n.line, field + ".name", "\(patternExcerpt(name)): use letters, digits, '.', '_' and '-' (not starting with '.')")
      }
      guard !named.contains(where: { $0.name == name }) else {
        throw error(n.line, field + ".name", "duplicate variant name '\(name)'")
      }
      var w = world
      if let overrides = replacing(item, at: ["name"], with: nil) { try w.apply(json: overrides, file: file) }
      let changed = w.overrides().filter { !reference.contains($0) }.joined(separator: "; ")
      named.append((name, changed, w))
    }
    guard named.count * datasets.count <= maxConfigurations else {
      throw error(variants.line, "world_variants", "\(named.count * datasets.count) (dataset, world) combinations; at most \(maxConfigurations)")
    }
    let expanded = try datasets.flatMap { d in
      try named.enumerated().map { i, v in
        let name = d.name + "." + v.name
        guard isValidName(name) else {
          throw error(variants.line, "world_variants", "dataset name \(patternExcerpt(name)) is not a valid name (at most 100 characters)")
        }
        return Dataset(
          name: name, source: d.source, world: v.world,
          worldPoint: WorldPoint(base: d.name, label: v.name, changed: v.changed, isReference: i == 0))
      }
    }
    if let dup = Dictionary(grouping: expanded, by: \.name).first(where: { $0.value.count > 1 }) {
      throw error(variants.line, "world_variants", "two variants give the dataset name '\(dup.key)'")
    }
    return (world, expanded)
  }
}
