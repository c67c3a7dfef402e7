import FetchSupport
import Foundation

/// Reads a canonical trace one user at a time like ``TraceReader``, with
/// the parsing spread over `jobs` worker threads: the calling thread reads
/// the file in chunks of about `chunkBytes` cut just before a `begin` row,
/// the workers parse whole chunks (the same parser, in memory), and
/// ``next()`` hands their users back in file order (``OrderedWork``).
///
/// The users, ``line`` after each of them, ``bytesRead`` at the end and
/// every error are those of ``TraceReader`` on the same file: a chunk is
/// only used when its parse is *clean* (no error, not ending inside a
/// user, no user id seen in an earlier chunk); at the first chunk that is
/// not, the reader hands over to a ``TraceReader`` resumed at that chunk's
/// first byte with the state a sequential reader has there (line number,
/// header seen, the users finished so far), which then reads to the end
/// and throws the error with its exact line and field. A stretch of more
/// than `maxChunkBytes` without a cut point (one huge user, or no
/// `begin` row) hands over the same way.
///
/// Each byte is read from the file once and given to ``hasher`` in file
/// order (the input hash), in place (the hash thread keeps the chunk's
/// buffer alive); after a hand-over the bytes already hashed are skipped.
///
/// Memory: at most `2 × jobs + 2` chunks read and not yet consumed (each
/// its bytes while parsed, then its users), and no more than about 64 MiB
/// of them whatever `jobs` (at least 4 chunks), independent of the number
/// of users. With `jobs` ≤ 1 it is a ``TraceReader``.
///
/// - Complexity: O(bytes); the calling thread does a `read(2)` and a
///   backward search for the last `begin` row per chunk (no copy: the
///   hash reads the chunk's buffer); the parse is the workers'.
package final class ParallelTraceReader {
  /// The path given to `init`, used in error messages.
  package let path: String
  /// The line the last user returned ends on (its `end` row).
  package private(set) var line = 0
  /// Bytes of the users returned so far (the whole file after the last).
  package var bytesRead: Int { sequential?.bytesRead ?? consumedBytes }
  /// Hashes every byte of the file once, in file order (set it before the
  /// first ``next()``).
  package var hasher: BackgroundSHA256? {
    didSet {
      if startedSequential, let hasher { sequential?.onRead = { hasher.update($0) } }
    }
  }
  /// Users to pass over (``TraceReader/skip``; set it before the first
  /// ``next()``): asked on the workers' threads, in no set order.
  package var skip: (@Sendable (UInt64) -> Bool)? {
    didSet { sequential?.skip = skip }
  }
  /// Chunks of more than this many bytes without a cut point are read by
  /// the sequential reader instead (by default; see `init`).
  package static let maxChunkBytes = 64 << 20
  /// The chunk size by default: 2 MiB, about 6 synthetic users of 28
  /// days (with 4 MiB, the peak resident set of `bench` at 1,000 users is
  /// about 40 MB higher than with the sequential reader).
  package static let defaultChunkBytes = 2 << 20
  private let maxChunk: Int

  private let limits: ResourceLimits
  private let chunkBytes: Int
  private let maxInFlight: Int
  private var fd: Int32 = -1
  private var work: OrderedWork<ParsedChunk>?
  /// Read from the file and not yet in a chunk.
  private var pending: ChunkStorage
  private var pendingCount = 0
  private var pendingCapacity: Int { pending.capacity }
  /// File offset of `pending`'s first byte; bytes read from the file.
  private var pendingOffset = 0
  private var fileOffset = 0
  private var readDone = false
  /// Where a chunk could not be cut (hand over there once the chunks
  /// before it are consumed).
  private var overflowAt: Int?
  /// Submitted chunks not yet taken: file offset, length, index.
  private var inFlight: [(offset: Int, count: Int, index: Int)] = []
  private var inFlightHead = 0
  private var chunksSubmitted = 0
  private var current: ParsedChunk?
  private var currentIndex = 0
  private var chunksTaken = 0
  private var lineBase = 0
  private var consumedBytes = 0
  private var finishedUsers = Set<UInt64>()
  private var sequential: TraceReader?
  private var startedSequential = false

  /// Opens a canonical trace; `jobs` parsing threads (≤ 1: none, a
  /// ``TraceReader``), chunks of about `chunkBytes` (more for a longer
  /// user). A file that is not a regular file is read sequentially.
  ///
  /// - Throws: ``TraceFormatError`` when the file cannot be opened.
  package init(
    path: String, limits: ResourceLimits = .current, jobs: Int, chunkBytes: Int = ParallelTraceReader.defaultChunkBytes,
    maxChunkBytes: Int = ParallelTraceReader.maxChunkBytes
  ) throws {
    self.path = path
    maxChunk = maxChunkBytes
    self.limits = limits
    self.chunkBytes = max(1, chunkBytes)
    // At most 2 × jobs + 2 chunks, and about 64 MiB of them (however many
    // jobs are asked for), at least 4; `jobs` clamped first, so that no
    // value overflows.
    let clampedJobs = min(max(1, jobs), 1 << 20)
    maxInFlight = max(4, min(2 * clampedJobs + 2, (64 << 20) / self.chunkBytes))
    pending = ChunkStorage(capacity: self.chunkBytes)
    var st = stat()
    let regular = stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    if jobs <= 1 || !regular {
      sequential = try TraceReader(path: path, limits: limits)
      startedSequential = true
      return
    }
    let f = open(path, O_RDONLY)
    guard f >= 0 else {
      throw TraceFormatError(file: path, line: 0, field: "-", message: "cannot open: \(String(cString: strerror(errno)))")
    }
    fd = f
    work = OrderedWork(jobs: min(jobs, maxInFlight))
  }

  deinit {
    work?.finish()
    if fd >= 0 { close(fd) }
  }

  /// The next complete user, or `nil` after the last one; the same users
  /// and errors as ``TraceReader/next()``.
  package func next() throws -> UserTrace? {
    while true {
      if let s = sequential {
        let u = try s.next()
        line = s.line
        return u
      }
      if let c = current, currentIndex < c.users.count {
        line = lineBase + c.endLines[currentIndex]
        currentIndex += 1
        if work!.pending < maxInFlight { try fill() }
        return c.users[currentIndex - 1]
      }
      if let c = current {
        lineBase += c.lines
        consumedBytes += c.bytes
        current = nil
      }
      try fill()
      guard work!.pending > 0 else {
        if let at = overflowAt {
          try handOver(at: at, sawHeader: chunksTaken > 0)
          continue
        }
        return nil
      }
      let c = work!.next()
      let slot = inFlight[inFlightHead]
      inFlightHead += 1
      if inFlightHead == inFlight.count {
        inFlight.removeAll(keepingCapacity: true)
        inFlightHead = 0
      }
      chunksTaken += 1
      if !c.clean || c.hashes.contains(where: finishedUsers.contains) {
        try handOver(at: slot.offset, sawHeader: slot.index > 0)
        continue
      }
      finishedUsers.formUnion(c.hashes)
      current = c
      currentIndex = 0
    }
  }

  /// Continues with a sequential reader from `offset` (a chunk start: a
  /// record start outside any user after the first chunk).
  private func handOver(at offset: Int, sawHeader: Bool) throws {
    work?.finish()
    work = nil
    let r = try TraceReader(path: path, limits: limits)
    try r.resume(atByte: offset, line: lineBase + 1, sawHeader: sawHeader, finishedUsers: finishedUsers)
    r.skip = skip
    if let hasher {
      let hashedUpTo = fileOffset
      var position = offset
      r.onRead = { block in
        let skip = max(0, min(block.count, hashedUpTo - position))
        position += block.count
        if skip < block.count { hasher.update(UnsafeRawBufferPointer(rebasing: block[skip...])) }
      }
    }
    sequential = r
    close(fd)
    fd = -1
  }

  /// Reads and submits chunks until `maxInFlight` are in flight or the
  /// file is read.
  private func fill() throws {
    guard let work else { return }
    while !readDone && work.pending < maxInFlight {
      // Read until a chunk's worth is pending (or the end of the file).
      var eof = false
      while pendingCount < pendingCapacity {
        let n = read(fd, pending.base + pendingCount, pendingCapacity - pendingCount)
        if n < 0 {
          if errno == EINTR { continue }
          // The sequential reader reports it with its line.
          overflowAt = pendingOffset
          readDone = true
          return
        }
        if n == 0 {
          eof = true
          break
        }
        hasher?.update(UnsafeRawBufferPointer(start: pending.base + pendingCount, count: n), keepingAlive: pending)
        pendingCount += n
        fileOffset += n
      }
      if eof {
        readDone = true
        if pendingCount > 0 || chunksSubmitted == 0 { submit(count: pendingCount) }
        return
      }
      guard let cut = ParallelTraceReader.lastCut(pending.base, pendingCount), cut > 0 else {
        if pendingCapacity >= maxChunk {
          overflowAt = pendingOffset
          readDone = true
          return
        }
        let bigger = ChunkStorage(capacity: pendingCapacity * 2)
        bigger.base.update(from: pending.base, count: pendingCount)
        pending = bigger
        continue
      }
      submit(count: cut)
    }
  }

  /// Submits `pending[0..<count]` as the next chunk and keeps the rest.
  private func submit(count: Int) {
    let rest = pendingCount - count
    let chunk = ChunkBytes(storage: pending, count: count)
    pending = ChunkStorage(capacity: max(chunkBytes, rest + chunkBytes / 2))
    if rest > 0 { pending.base.update(from: chunk.storage.base + count, count: rest) }
    inFlight.append((pendingOffset, count, chunksSubmitted))
    let (path, limits, sawHeader, skip) = (self.path, self.limits, chunksSubmitted > 0, self.skip)
    work!.submit { ParallelTraceReader.parse(chunk, path: path, limits: limits, sawHeader: sawHeader, skip: skip) }
    chunksSubmitted += 1
    pendingOffset += count
    pendingCount = rest
  }

  /// Parses one chunk with ``TraceReader``; `clean` when it parsed to its
  /// end without an error (so ending outside a user, past the header).
  static func parse(
    _ chunk: ChunkBytes, path: String, limits: ResourceLimits, sawHeader: Bool, skip: (@Sendable (UInt64) -> Bool)?
  ) -> ParsedChunk {
    withExtendedLifetime(chunk.storage) {
      parse(chunk.storage.base, chunk.count, path: path, limits: limits, sawHeader: sawHeader, skip: skip)
    }
  }

  private static func parse(
    _ base: UnsafeMutablePointer<UInt8>, _ count: Int, path: String, limits: ResourceLimits, sawHeader: Bool,
    skip: (@Sendable (UInt64) -> Bool)?
  ) -> ParsedChunk {
    let r = TraceReader(path: path, limits: limits, borrowing: base, count: count, sawHeader: sawHeader)
    r.skip = skip
    var out = ParsedChunk(bytes: count)
    do {
      while let u = try r.next() {
        out.users.append(u)
        out.endLines.append(r.line)
      }
      // Every user the chunk finished, the skipped ones included.
      out.hashes = Array(r.finishedUsers)
      out.clean = true
    } catch {
      out = ParsedChunk(bytes: count)
    }
    out.lines = r.reader.nextLineNumber - 1
    return out
  }

  /// The offset of the last row in `buf[0..<count]` that follows a line
  /// feed and starts with `user,time,begin,` (no quote or line break in
  /// its first two fields), or `nil`. If the chunk before it holds an odd
  /// number of `"`, the cut is inside a quoted field: the chunk's parse
  /// then ends inside the quote, is not clean, and the sequential reader
  /// takes over there. Otherwise a sequential reader reaching the cut is at
  /// a record start, and the record is a `begin` row or an error.
  ///
  /// - Complexity: O(bytes after the cut), scanned backwards.
  static func lastCut(_ buf: UnsafeMutablePointer<UInt8>, _ count: Int) -> Int? {
    var i = count - 1
    while i > 0 {
      // The line start at or before i.
      while i > 0 && buf[i - 1] != 10 { i -= 1 }
      guard i > 0 else { return nil }
      if isBeginRow(buf + i, count - i) { return i }
      i -= 1
    }
    return nil
  }

  /// Whether `p[0..<n]` starts with `field,field,begin,`, the two fields
  /// free of quotes, commas and line breaks.
  private static func isBeginRow(_ p: UnsafeMutablePointer<UInt8>, _ n: Int) -> Bool {
    var j = 0
    for _ in 0..<2 {
      while j < n && p[j] != 44 {
        let c = p[j]
        if c == 34 || c == 10 || c == 13 { return false }
        j += 1
      }
      guard j < n else { return false }
      j += 1
    }
    let begin: [UInt8] = [98, 101, 103, 105, 110, 44]  // "begin,"
    guard n - j >= begin.count else { return false }
    for k in 0..<begin.count where p[j + k] != begin[k] { return false }
    return true
  }
}

/// A buffer of trace bytes, freed when the last of the worker parsing it
/// and the hash thread lets it go.
final class ChunkStorage: @unchecked Sendable {
  let base: UnsafeMutablePointer<UInt8>
  let capacity: Int

  init(capacity: Int) {
    self.capacity = capacity
    base = .allocate(capacity: capacity)
  }

  deinit { base.deallocate() }
}

/// The first `count` bytes of a buffer: one chunk, for the worker that
/// parses it.
struct ChunkBytes: Sendable {
  let storage: ChunkStorage
  let count: Int
}

/// The users of one chunk, parsed by a worker.
struct ParsedChunk: Sendable {
  var users: [UserTrace] = []
  /// The line of each user's `end` row, counted from 1 in the chunk.
  var endLines: [Int] = []
  /// ``StableHash/fnv1a(_:)`` of each user id the chunk finished (those
  /// ``ParallelTraceReader/skip`` passed over included), in no set order.
  var hashes: [UInt64] = []
  /// Lines in the chunk; its bytes.
  var lines = 0
  var bytes: Int
  /// Parsed to the end without an error.
  var clean = false

  init(bytes: Int) { self.bytes = bytes }
}
