//! The C allocator's settings for a long-lived gateway process (glibc only; elsewhere a no-op).
//!
//! glibc raises its mmap threshold to the size of each large block freed, up to 32 MiB. After one
//! 15 MiB tool call the next large buffers (SQLite's copy of the row on the writer thread, a
//! child's stdout buffer on another) come from the per-thread arenas instead of their own
//! mappings, and stay resident there after they are freed: the gateway's RSS follows the largest
//! message it ever carried, not what it holds. A fixed threshold keeps every block of 1 MiB or
//! more in a mapping of its own, returned to the system when freed. A cap of two arenas keeps a
//! resident app's many threads (tokio's, GTK's, WebKit's IPC) from each growing an arena of
//! their own whose freed pages are never reused by the others.
#![allow(unsafe_code)] // mallopt(3): two process-wide integer settings, made before any thread.

/// Blocks at least this large are mapped on their own and unmapped when freed.
pub const MMAP_THRESHOLD: usize = 1024 * 1024;

/// The most malloc arenas the process uses.
pub const ARENA_MAX: usize = 2;

/// Applies the settings. Call it first in `main`, before any thread starts; harmless to repeat.
/// Returns whether the allocator took them (false on other C libraries, where nothing is done).
pub fn tune() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let as_int = |n: usize| libc::c_int::try_from(n).unwrap_or(libc::c_int::MAX);
        // SAFETY: mallopt only stores an integer in the allocator's parameters; both values are
        // in the ranges mallopt(3) accepts, and it returns 0 (and changes nothing) otherwise.
        let threshold = unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, as_int(MMAP_THRESHOLD)) };
        // SAFETY: as above.
        let arenas = unsafe { libc::mallopt(libc::M_ARENA_MAX, as_int(ARENA_MAX)) };
        threshold == 1 && arenas == 1
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Gives the memory the allocator holds free back to the system (glibc's `malloc_trim`, which
/// also releases free pages inside the heap, not only at its top). Called when the last session
/// of a burst ends: the heap's resident size follows the busiest moment the process has had (many
/// sessions' buffers live at once), and freed memory under a live block near the heap's top is
/// otherwise kept for good. Takes about a millisecond per 10 MiB of heap; a no-op elsewhere.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes the allocator's own locks and only returns free pages.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(all(test, target_os = "linux", target_env = "gnu"))]
mod tests {
    use super::*;

    /// Blocks the allocator has mapped on their own (`mallinfo2`'s `hblks`).
    fn mapped_blocks() -> usize {
        // SAFETY: mallinfo2 only reads the allocator's counters.
        unsafe { libc::mallinfo2() }.hblks
    }

    #[test]
    fn a_large_block_freed_does_not_raise_the_mmap_threshold() {
        assert!(tune(), "glibc accepts both settings");
        // Untuned, freeing this raises the threshold to 16 MiB, and the 2 MiB block below comes
        // from the heap instead of a mapping of its own.
        drop(std::hint::black_box(vec![1u8; 16 * 1024 * 1024]));
        let before = mapped_blocks();
        let block = std::hint::black_box(vec![1u8; 2 * MMAP_THRESHOLD]);
        assert_eq!(mapped_blocks(), before + 1, "a 2 MiB block is mapped on its own");
        drop(block);
        assert_eq!(mapped_blocks(), before, "and unmapped when freed");
    }
}
