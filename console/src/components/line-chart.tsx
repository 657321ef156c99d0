/**
 * Several series over time in one chart (uPlot, as usage-chart.tsx, with its axis sizing): one line
 * per model or target, gaps where a bucket had no requests. The legend is the page's own list (text
 * in the page, not canvas): each series' colour is SERIES_COLOURS[its index], the legend's the same
 * colour by class (`swatch-0`…`swatch-7` in styles.css), so no style attribute is needed. The chart
 * names its axis figures in `data-axis-labels` (`|` between two, as they hold spaces) and its width in `data-axis-size`.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { AXIS_FONT, axisWidth } from './usage-chart';

/** Told apart in light and dark themes, and by most colour-blind readers in the first five. */
export const SERIES_COLOURS = ['#1f77b4', '#e8710a', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#17becf'] as const;

export interface LineSeries {
  label: string;
  /** One per time; null: nothing to draw there. */
  values: Array<number | null>;
}

export function LineChart({ times, series, figure, label }: { times: number[]; series: LineSeries[]; figure: (tick: number) => string; label: string }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (element === null) return undefined;
    const muted = getComputedStyle(element).getPropertyValue('--muted').trim() || '#5a6470';
    const axis = { stroke: muted, grid: { stroke: 'rgba(128,128,128,0.2)' }, ticks: { stroke: 'rgba(128,128,128,0.3)' }, font: AXIS_FONT };
    const options: uPlot.Options = {
      width: Math.max(element.clientWidth, 200),
      height: 180,
      legend: { show: false },
      cursor: { show: false },
      scales: { x: { time: true, range: [times[0] ?? 0, times.at(-1) ?? 1] }, y: { range: (_plot, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        axis,
        {
          ...axis,
          values: (_plot, ticks) => ticks.map(figure),
          size: (_plot, values) => {
            const labels = (values ?? []).filter((text) => text !== '');
            const size = axisWidth(labels);
            element.dataset.axisLabels = labels.join('|');
            element.dataset.axisSize = String(size);
            return size;
          },
        },
      ],
      series: [
        {},
        ...series.map((line, index) => ({ label: line.label, stroke: SERIES_COLOURS[index % SERIES_COLOURS.length], width: 2, points: { show: times.length <= 48 } })),
      ],
    };
    const plot = new uPlot(options, [times, ...series.map((line) => line.values)] as uPlot.AlignedData, element);
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(element.clientWidth, 200), height: 180 }));
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [times, series, figure]);
  return <div class="chart" ref={box} role="img" aria-label={label} />;
}
