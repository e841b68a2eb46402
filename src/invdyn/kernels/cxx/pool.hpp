// The threads that batches share: a pool started at the first large batch, whose workers and
// the calling thread take pieces of the batch from one counter.
//
// A process forked from one whose pool had started (a fork-based multiprocessing.Pool, a torch
// DataLoader's workers) has none of its threads: the child forgets that pool at the fork and
// starts its own at its first large batch. One batch at a time runs on the pool; a batch that
// another thread asks for meanwhile runs on its own thread.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <sched.h>
#define INVDYN_POSIX 1
#endif

namespace invdyn {

// below this many states a batch runs on the calling thread: waking the pool costs more than
// it saves (microseconds), and on a busy machine waits for a descheduled worker (milliseconds)
constexpr int64_t PARALLEL_FROM = 32;

// at most this many pieces of a batch for the threads to share: even shares on large machines
constexpr int64_t CHUNKS = 256;

// at most this many threads, whatever INVDYN_NUM_THREADS asks
constexpr int MAX_THREADS = 1024;

// the threads this process may run on: INVDYN_NUM_THREADS where set, else its CPU affinity
inline int pool_threads() {
  if (const char* given = std::getenv("INVDYN_NUM_THREADS")) {
    const int n = std::atoi(given);
    if (n > 0) return std::min(n, MAX_THREADS);
  }
#ifdef CPU_COUNT
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
#endif
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

class Pool {
 public:
  // a pool of up to `threads` threads, this one included: as many as the system starts
  explicit Pool(int threads) {
    try {
      for (int k = 1; k < threads; ++k) workers_.emplace_back([this] { serve(); });
    } catch (const std::exception&) {
      // no more threads (a limit, memory): those started serve
    }
  }
  Pool(const Pool&) = delete;
  Pool& operator=(const Pool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  // run task(piece) for every piece in [0, pieces) on the pool and this thread; false, with
  // nothing run, when another thread's batch holds the pool
  bool run(int64_t pieces, const std::function<void(int64_t)>& task) {
    std::unique_lock<std::mutex> owner(busy_, std::try_to_lock);
    if (!owner.owns_lock()) return false;
    in_pool() = true;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      task_ = &task;
      pieces_ = pieces;
      next_.store(0);
      joined_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    take_pieces(task);
    // the task outlives every worker that took part
    std::unique_lock<std::mutex> lock(mutex_);
    task_ = nullptr;
    done_.wait(lock, [this] { return joined_ == 0; });
    in_pool() = false;
    return true;
  }

  // whether this thread runs a piece of a batch: a batch asked for there runs on it alone
  static bool& in_pool() {
    thread_local bool inside = false;
    return inside;
  }

 private:
  void take_pieces(const std::function<void(int64_t)>& task) {
    for (int64_t piece = next_++; piece < pieces_; piece = next_++) task(piece);
  }

  void serve() {
    in_pool() = true;
    uint64_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen && task_ != nullptr; });
      seen = generation_;
      const std::function<void(int64_t)>& task = *task_;
      ++joined_;
      lock.unlock();
      take_pieces(task);
      lock.lock();
      if (--joined_ == 0) done_.notify_all();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex busy_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t pieces_ = 0;
  std::atomic<int64_t> next_{0};
  int joined_ = 0;
  uint64_t generation_ = 0;
};

// this process's pool, started at its first use; never destroyed, as its workers wait on it
// until the process ends (a forked child forgets its parent's, whose threads it lacks)
inline Pool*& pool_slot() {
  static Pool* pool = nullptr;
#ifdef INVDYN_POSIX
  static const bool forgets_at_fork =
      pthread_atfork(nullptr, nullptr, [] { pool_slot() = nullptr; }) == 0;
  (void)forgets_at_fork;
#endif
  return pool;
}

inline Pool& shared_pool() {
  static std::mutex starting;
  std::lock_guard<std::mutex> lock(starting);
  Pool*& pool = pool_slot();
  if (pool == nullptr) pool = new Pool(pool_threads());
  return *pool;
}

// run task(start, stop) over [0, count) in pieces of whole `block`s: on this thread below
// PARALLEL_FROM, within a piece of another batch, or where the pool cannot be had (busy with
// another thread's batch, or not started for want of memory); else shared with its threads
template <typename Task>
inline void parallel_for(int64_t count, int64_t block, const Task& task) {
  if (count < PARALLEL_FROM || Pool::in_pool()) {
    task(0, count);
    return;
  }
  const int64_t blocks = (count + block - 1) / block;
  const int64_t pieces = std::min(blocks, CHUNKS);
  bool shared = false;
  try {
    const std::function<void(int64_t)> piece_task = [&](int64_t c) {
      task(c * blocks / pieces * block, std::min(count, (c + 1) * blocks / pieces * block));
    };
    shared = shared_pool().run(pieces, piece_task);
  } catch (const std::bad_alloc&) {
    // the pool or the task could not be made
  }
  if (!shared) task(0, count);
}

}  // namespace invdyn
