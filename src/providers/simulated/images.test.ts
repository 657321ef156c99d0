import { inflateSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { drawnSize, solidPng } from './images.js';

describe('the simulated PNG', () => {
  it('is a valid PNG of the size drawn, every pixel the colour asked', () => {
    const { width, height } = drawnSize('1536x1024');
    expect([width, height]).toEqual([256, 171]);
    const png = solidPng(width, height, [1, 2, 3]);
    expect(png.subarray(1, 4).toString('ascii')).toBe('PNG');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([256, 171]);
    const dataLength = png.readUInt32BE(33);
    expect(png.subarray(37, 41).toString('ascii')).toBe('IDAT');
    const pixels = inflateSync(png.subarray(41, 41 + dataLength));
    expect(pixels.length).toBe(171 * (1 + 256 * 3));
    expect([...pixels.subarray(1, 4)]).toEqual([1, 2, 3]);
  });
});
