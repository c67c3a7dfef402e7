/// One numeric field of a record type, declared once: its name (the key or
/// column in files), unit and meaning, how it pools over records, and how
/// to read and write it.
///
/// Records that are written and read back by field name (never by
/// position) list their fields as a table of these, so adding a field is
/// one declaration: the writer, the reader and the documentation follow.
/// Counts are stored as `Int` and carried as exact `Double`s.
package struct RecordField<Record>: Sendable {
  /// How a field pools over many records (pairs, devices) into one figure.
  package typealias Pooling = RecordPooling

  /// The key in files (snake_case, unit in the name where it has one).
  package let name: String
  /// The unit (`J`, `bytes`, `s`, `days`, `count`, `ratio`).
  package let unit: String
  /// What the field means.
  package let help: String
  /// How the field pools over records.
  package let pooling: Pooling
  /// The field's value.
  package let get: @Sendable (Record) -> Double
  /// Sets the field from a value read back.
  package let set: @Sendable (inout Record, Double) -> Void

  /// A `Double` field.
  package init(
    _ name: String, _ unit: String, _ help: String, _ pooling: Pooling,
    _ path: any WritableKeyPath<Record, Double> & Sendable
  ) {
    self.name = name
    self.unit = unit
    self.help = help
    self.pooling = pooling
    get = { $0[keyPath: path] }
    set = { $0[keyPath: path] = $1 }
  }

  /// A field read and set through functions (a figure of a record's part).
  package init(
    _ name: String, _ unit: String, _ help: String, _ pooling: Pooling, get: @escaping @Sendable (Record) -> Double,
    set: @escaping @Sendable (inout Record, Double) -> Void
  ) {
    (self.name, self.unit, self.help, self.pooling, self.get, self.set) = (name, unit, help, pooling, get, set)
  }

  /// A count (pooled by summing).
  package init(_ name: String, _ help: String, count path: any WritableKeyPath<Record, Int> & Sendable) {
    self.name = name
    unit = "count"
    self.help = help
    pooling = .sum
    get = { Double($0[keyPath: path]) }
    set = { $0[keyPath: path] = Int($1) }
  }
}

/// How a figure pools over many records (pairs, devices) into one figure;
/// one type for every record, so a metric declared once carries it to each.
package enum RecordPooling: Sendable, Equatable {
  /// Totals add up (counts, days, joules, bytes).
  case sum
  /// A mean over opens: pooled as the mean weighted by the record's opens.
  case opensWeighted
  /// Not pooled from the records (quantiles and time averages: pooled
  /// figures come from the merged histograms, or there are none).
  case none
}

extension Array {
  /// The values of `record`'s fields, in table order.
  package func values<Record>(of record: Record) -> [Double] where Element == RecordField<Record> {
    map { $0.get(record) }
  }

  /// The table position of each of `names`, in `names` order (for
  /// ``record(_:positions:values:)``); `nil` when a field of the table is
  /// missing or a name is unknown or repeated.
  ///
  /// - Complexity: O(fields).
  package func positions<Record>(of names: [String]) -> [Int]? where Element == RecordField<Record> {
    guard names.count == count else { return nil }
    var index: [String: Int] = [:]
    for (i, f) in enumerated() { index[f.name] = i }
    var seen = [Bool](repeating: false, count: count)
    var positions: [Int] = []
    positions.reserveCapacity(count)
    for name in names {
      guard let i = index[name], !seen[i] else { return nil }
      seen[i] = true
      positions.append(i)
    }
    return positions
  }

  /// A record with field `positions[k]` set from `values[k]`, the rest at
  /// `empty`'s values; `nil` when the counts differ. `positions` come from
  /// ``positions(of:)``, once per header, not once per record.
  ///
  /// - Complexity: O(fields).
  package func record<Record>(_ empty: Record, positions: [Int], values: [Double]) -> Record?
  where Element == RecordField<Record> {
    guard values.count == positions.count else { return nil }
    var r = empty
    for (i, v) in zip(positions, values) { self[i].set(&r, v) }
    return r
  }
}
