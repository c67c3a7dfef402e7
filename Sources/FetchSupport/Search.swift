/// The first index `i` in `0...count` at which a monotone predicate holds
/// (`isAfter` is false on a prefix of `0..<count` and true on the rest;
/// `count` is returned when it holds nowhere), searched outward from `hint`.
///
/// A replay asks for times that mostly move forward, so starting from the
/// last answer costs O(log distance) (exponential then binary search) rather
/// than O(log count) cache-missing probes from the middle.
@inlinable
package func firstIndex(count: Int, from hint: Int, where isAfter: (Int) -> Bool) -> Int {
  let h = min(max(hint, 0), count)
  var lo: Int, hi: Int
  if h < count && !isAfter(h) {
    // Forward: the answer is beyond h.
    lo = h + 1
    var step = 1
    var p = h + 1
    while p < count && !isAfter(p) {
      lo = p + 1
      step &<<= 1
      p = h + step
    }
    hi = min(p, count)
  } else {
    // Backward: isAfter(h) holds (or h == count).
    if h == 0 || !isAfter(h - 1) { return h }
    hi = h - 1
    var step = 1
    var p = hi - 1
    while p >= 0 && isAfter(p) {
      hi = p
      step &<<= 1
      p = hi - step
    }
    lo = max(p + 1, 0)
  }
  return firstIndex(in: lo..<hi, where: isAfter)
}

/// The first index in `range` at which a monotone predicate holds (false on
/// a prefix of the range, true on the rest), or `range.upperBound` when it
/// holds nowhere: a binary search, O(log range.count).
@inlinable
package func firstIndex(in range: Range<Int>, where isAfter: (Int) -> Bool) -> Int {
  var lo = range.lowerBound, hi = range.upperBound
  while lo < hi {
    let mid = (lo + hi) >> 1
    if isAfter(mid) { hi = mid } else { lo = mid + 1 }
  }
  return lo
}

/// Merges lists that are each sorted by `areInIncreasingOrder` into one
/// sorted list; at equal elements the earlier list's come first (stable).
///
/// - Complexity: O(n · k) for n elements in k lists (k is small here: the
///   apps of one device).
@inlinable
package func mergeSorted<T>(_ lists: [[T]], by areInIncreasingOrder: (T, T) -> Bool) -> [T] {
  guard var out = lists.first else { return [] }
  for l in lists.dropFirst() where !l.isEmpty {
    if out.isEmpty {
      out = l
      continue
    }
    // Two-way merge: `out` holds the earlier lists, so it wins ties.
    let a = out
    out = []
    out.reserveCapacity(a.count + l.count)
    var i = 0, j = 0
    while i < a.count && j < l.count {
      if areInIncreasingOrder(l[j], a[i]) {
        out.append(l[j])
        j += 1
      } else {
        out.append(a[i])
        i += 1
      }
    }
    out.append(contentsOf: a[i...])
    out.append(contentsOf: l[j...])
  }
  return out
}
