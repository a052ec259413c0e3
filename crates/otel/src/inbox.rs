//! [`Inbox`]: the queue from a run's threads to the sink's thread, bounded, and woken lazily.
//!
//! A queue whose receiver is woken for every item costs each sender a system call whenever
//! the receiver has caught up, which is nearly always: a react turn takes microseconds, and
//! waking a thread about as long. Here a sender only pushes (a compare-and-swap) and reads the
//! receiver's state: the receiver, after draining, dozes for [`DOZE`] and drains again, and only
//! when a doze found nothing does it sleep until a sender wakes it; a sender also wakes a
//! dozing receiver once the queue is half full, so a burst is not dropped for want of a drain.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering::SeqCst};
use std::thread::Thread;
use std::time::Duration;

use crossbeam_queue::ArrayQueue;

/// How long the receiver waits before draining again while items keep coming.
pub(crate) const DOZE: Duration = Duration::from_millis(10);

const AWAKE: u8 = 0;
const DOZING: u8 = 1;
const ASLEEP: u8 = 2;

pub(crate) struct Inbox<T> {
    queue: ArrayQueue<T>,
    state: AtomicU8,
    closed: AtomicBool,
    receiver: OnceLock<Thread>,
}

impl<T> Inbox<T> {
    pub(crate) fn new(capacity: usize) -> Self {
        Inbox {
            queue: ArrayQueue::new(capacity.max(1)),
            state: AtomicU8::new(AWAKE),
            closed: AtomicBool::new(false),
            receiver: OnceLock::new(),
        }
    }

    /// Queues `item`, or gives it back when the queue is full.
    pub(crate) fn push(&self, item: T) -> Result<(), T> {
        self.queue.push(item)?;
        let state = self.state.load(SeqCst);
        if state == ASLEEP || (state == DOZING && self.queue.len() * 2 >= self.queue.capacity()) {
            self.wake();
        }
        Ok(())
    }

    /// Wakes the receiver now, whatever it is doing.
    pub(crate) fn wake(&self) {
        if self.state.swap(AWAKE, SeqCst) != AWAKE
            && let Some(receiver) = self.receiver.get()
        {
            receiver.unpark();
        }
    }

    /// Lets the receiver end once it has drained the queue.
    pub(crate) fn close(&self) {
        self.closed.store(true, SeqCst);
        self.state.store(AWAKE, SeqCst);
        if let Some(receiver) = self.receiver.get() {
            receiver.unpark();
        }
    }

    /// The receiver's loop, on its own thread: hands each item to `f`, until closed and empty.
    pub(crate) fn receive(&self, mut f: impl FnMut(T)) {
        let _ = self.receiver.set(std::thread::current());
        loop {
            let mut any = false;
            while let Some(item) = self.queue.pop() {
                any = true;
                f(item);
            }
            if self.closed.load(SeqCst) && self.queue.is_empty() {
                return;
            }
            if any {
                self.state.store(DOZING, SeqCst);
                std::thread::park_timeout(DOZE);
            } else {
                // Asleep only once the queue is seen empty after saying so: a sender that
                // pushed before then is drained now, one that pushed after sees `ASLEEP`.
                self.state.store(ASLEEP, SeqCst);
                if self.queue.is_empty() && !self.closed.load(SeqCst) {
                    std::thread::park();
                }
            }
            self.state.store(AWAKE, SeqCst);
        }
    }
}
