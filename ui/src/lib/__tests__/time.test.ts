import { describe, expect, it } from 'vitest';
import { countdownLevel, formatCountdown, formatDuration, fromLocalInput, remainingFraction, toLocalInput } from '../time';

describe('countdown formatting', () => {
  it.each([
    [45_000, '45 s'],
    [44_001, '45 s'],
    [999, '1 s'],
    [0, '0 s'],
    [-5000, '0 s'],
    [59_999, '1:00'],
    [60_000, '1:00'],
    [125_000, '2:05'],
    [3_600_000, '1:00:00'],
    [3_725_000, '1:02:05'],
  ])('%i ms → %s', (ms, text) => {
    expect(formatCountdown(ms)).toBe(text);
  });

  it('grows urgent near the end', () => {
    expect(countdownLevel(30_000)).toBe('calm');
    expect(countdownLevel(10_000)).toBe('warn');
    expect(countdownLevel(5_000)).toBe('urgent');
  });

  it('fraction left is clamped to 0..1', () => {
    expect(remainingFraction(50, 0, 100)).toBe(0.5);
    expect(remainingFraction(200, 0, 100)).toBe(0);
    expect(remainingFraction(-10, 0, 100)).toBe(1);
    expect(remainingFraction(0, 10, 10)).toBe(0);
  });

  it('durations', () => {
    expect(formatDuration(null)).toBe('—');
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(3200)).toBe('3.2 s');
    expect(formatDuration(42_000)).toBe('42 s');
    expect(formatDuration(240_000)).toBe('4 min');
  });

  it('datetime-local round trip', () => {
    const ms = new Date(2025, 5, 1, 9, 30).getTime();
    expect(toLocalInput(ms)).toBe('2025-06-01T09:30');
    expect(fromLocalInput('2025-06-01T09:30')).toBe(ms);
    expect(fromLocalInput('')).toBeNull();
    expect(fromLocalInput('junk')).toBeNull();
  });
});
