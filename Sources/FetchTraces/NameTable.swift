/// The distinct names (app names or region ids) of one user, as bytes, each
/// with its index in order of first appearance, found through an
/// open-addressing hash table.
///
/// The table keeps at most half its slots full, so a lookup probes O(1)
/// slots on average whatever the number of names, and compares bytes only
/// on an equal 64-bit hash (``hash(_:)``, of every byte of the name).
///
/// - Complexity: ``find(_:hash:)`` and ``add(_:hash:)`` O(1) expected plus
///   O(length) for the byte comparison; growing rehashes the stored hashes.
struct NameTable {
  /// The names' hashes and bytes, by index.
  private(set) var hashes: [UInt64] = []
  private(set) var names: [[UInt8]] = []
  /// 1 + the index of the name in each slot (0: empty); a power of two.
  private var slots = [Int32](repeating: 0, count: NameTable.initialSlots)
  /// log2(slots.count), for taking a hash's top bits as the slot.
  private var shift = 64 - 6
  /// Slots looked at and byte comparisons made so far: the work of the
  /// lookups, for tests of how it scales (not a time).
  private(set) var probes = 0

  private static let initialSlots = 64

  var count: Int { names.count }

  /// The index of the name `b` whose hash is `h`, or nil.
  @inline(__always) mutating func find(_ b: UnsafeBufferPointer<UInt8>, hash h: UInt64) -> Int32? {
    let mask = slots.count - 1
    var i = Int(truncatingIfNeeded: h >> UInt64(shift))
    while true {
      probes &+= 1
      let k = Int(slots[i]) - 1
      if k < 0 { return nil }
      if hashes[k] == h && TraceReader.equal(b, names[k]) { return Int32(k) }
      i = (i + 1) & mask
    }
  }

  /// Adds `b` (not in the table; hash `h`) and returns its index.
  mutating func add(_ b: UnsafeBufferPointer<UInt8>, hash h: UInt64) -> Int32 {
    let k = Int32(names.count)
    hashes.append(h)
    names.append(Array(b))
    if 2 * names.count > slots.count {
      slots = [Int32](repeating: 0, count: 2 * slots.count)
      shift -= 1
      for j in 0..<names.count - 1 { place(hashes[j], Int32(j)) }
    }
    place(h, k)
    return k
  }

  private mutating func place(_ h: UInt64, _ k: Int32) {
    let mask = slots.count - 1
    var i = Int(truncatingIfNeeded: h >> UInt64(shift))
    while slots[i] != 0 { i = (i + 1) & mask }
    slots[i] = k + 1
  }

  /// Empties the table (for the next user), back to its initial size.
  mutating func removeAll() {
    probes = 0
    if slots.count == NameTable.initialSlots {
      hashes.removeAll(keepingCapacity: true)
      names.removeAll(keepingCapacity: true)
      for k in slots.indices { slots[k] = 0 }
    } else {
      hashes = []
      names = []
      slots = [Int32](repeating: 0, count: NameTable.initialSlots)
      shift = 64 - 6
    }
  }

  /// A 64-bit hash of every byte of `b` (equal names, equal hashes): its
  /// length and 8-byte words (overlapping loads; up to 16 bytes without a
  /// loop), mixed by a multiply-xorshift finaliser so the top bits, which
  /// pick the slot, depend on every byte.
  @inline(__always) static func hash(_ b: UnsafeBufferPointer<UInt8>) -> UInt64 {
    let n = b.count
    guard n > 0 else { return 0 }
    let x = UnsafeRawPointer(b.baseAddress!)
    var lo: UInt64
    var hi: UInt64
    switch n {
    case 8...:
      lo = x.loadUnaligned(as: UInt64.self)
      hi = x.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
      var i = 8
      while i + 8 < n {  // the middle words of a name over 16 bytes
        lo = (lo ^ x.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xFF51_AFD7_ED55_8CCD
        lo ^= lo >> 29
        i += 8
      }
    case 4..<8:
      lo = UInt64(x.loadUnaligned(as: UInt32.self))
      hi = UInt64(x.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
    default:
      lo = UInt64(b[0]) | UInt64(b[n >> 1]) << 8 | UInt64(b[n - 1]) << 16
      hi = 0
    }
    var h = (lo &* 0x9E37_79B9_7F4A_7C15) ^ (hi &* 0xC2B2_AE3D_27D4_EB4F) ^ UInt64(n)
    h ^= h >> 32
    h = h &* 0xD6E8_FEB8_6659_FD93
    h ^= h >> 32
    return h
  }
}

/// A user's app names in order of first appearance, each with its index:
/// the app table an importer builds while it reads a user's rows.
struct AppNames {
  /// The names, by index.
  private(set) var names: [String] = []
  private var indices: [String: Int32] = [:]

  var count: Int { names.count }

  /// The index of `name`, or nil before it is added.
  func index(of name: String) -> Int32? { indices[name] }

  /// The index of `name`, added at its first appearance.
  mutating func add(_ name: String) -> Int32 {
    if let a = indices[name] { return a }
    let a = Int32(names.count)
    names.append(name)
    indices[name] = a
    return a
  }
}

/// Renumbers a user's apps in the order of their first open, as a reader of
/// the written trace sees them.
struct FirstOpenOrder {
  private let names: [String]
  private var index: [Int32]
  /// The names of the apps opened so far, in the new order.
  private(set) var apps: [String] = []

  /// For apps `0..<names.count` named `names`.
  init(names: [String]) {
    self.names = names
    index = [Int32](repeating: -1, count: names.count)
  }

  /// The new index of app `a`; its first call numbers the app.
  mutating func callAsFunction(_ a: Int) -> Int32 {
    if index[a] < 0 {
      index[a] = Int32(apps.count)
      apps.append(names[a])
    }
    return index[a]
  }
}
