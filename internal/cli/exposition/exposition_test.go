package exposition

import (
	"bytes"
	"math"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/proto"
)

// families holds what is hard to write right: escapes in label values
// and help, UTF-8 (and bytes that are not), numbers of every shape.
var families = []Family{
	{Name: "chatq_up", Type: Gauge, Help: "1 when the last scrape read the server.", Samples: []Sample{{Value: 1}}},
	{Name: "chatq_queue_messages", Type: Gauge, Help: `Messages by state; "quotes", a \ and a` + "\nnewline.",
		Samples: []Sample{
			{Labels: []Label{{"queue", "jobs"}, {"state", "ready"}}, Value: 3},
			{Labels: []Label{{"queue", `a"b\c` + "\nd"}, {"state", "delayed"}}, Value: 0},
			{Labels: []Label{{"queue", "日本語 ünï"}, {"state", "inflight"}}, Value: -1},
		}},
	{Name: "chatq_queue_messages_sent_total", Type: Counter, Help: "Pushes.",
		Samples: []Sample{
			{Labels: []Label{{"queue", "jobs"}}, Value: 12345678901},
			{Labels: []Label{{"queue", "big"}}, Value: 1e21},
			{Labels: []Label{{"queue", "small"}}, Value: 1e-7},
		}},
	{Name: "chatq_scrape_duration_seconds", Type: Gauge, Samples: []Sample{{Value: 0.0123}}},
	{Name: "odd_values", Type: Gauge, Help: "NaN and infinities.", Samples: []Sample{
		{Labels: []Label{{"v", "nan"}}, Value: math.NaN()},
		{Labels: []Label{{"v", "+inf"}}, Value: math.Inf(1)},
		{Labels: []Label{{"v", "-inf"}}, Value: math.Inf(-1)},
		{Labels: []Label{{"v", "-0"}}, Value: math.Copysign(0, -1)},
		{Labels: []Label{{"v", "1/3"}}, Value: 1.0 / 3},
		{Labels: []Label{{"v", "-2.5"}}, Value: -2.5},
		{Labels: []Label{{"v", "max"}}, Value: math.MaxFloat64},
		{Labels: []Label{{"v", "2^53+1"}}, Value: 1 << 53},
	}},
	{Name: "empty", Type: Gauge, Help: "no samples: left out"},
}

// dtoFamily is fam as client_model's protobuf, for expfmt.
func dtoFamily(fam Family) *dto.MetricFamily {
	mf := &dto.MetricFamily{Name: proto.String(fam.Name)}
	if fam.Help != "" {
		mf.Help = proto.String(fam.Help)
	}
	mf.Type = dto.MetricType_GAUGE.Enum()
	if fam.Type == Counter {
		mf.Type = dto.MetricType_COUNTER.Enum()
	}
	for _, s := range fam.Samples {
		m := &dto.Metric{}
		for _, l := range s.Labels {
			m.Label = append(m.Label, &dto.LabelPair{Name: proto.String(l.Name), Value: proto.String(l.Value)})
		}
		if fam.Type == Counter {
			m.Counter = &dto.Counter{Value: proto.Float64(s.Value)}
		} else {
			m.Gauge = &dto.Gauge{Value: proto.Float64(s.Value)}
		}
		mf.Metric = append(mf.Metric, m)
	}
	return mf
}

// Both formats come out byte for byte as expfmt, the reference encoder,
// writes them.
func TestSameAsExpfmt(t *testing.T) {
	for _, f := range []Format{Text, OpenMetrics} {
		var want bytes.Buffer
		for _, fam := range families {
			if len(fam.Samples) == 0 {
				continue
			}
			var err error
			if f == OpenMetrics {
				_, err = expfmt.MetricFamilyToOpenMetrics(&want, dtoFamily(fam))
			} else {
				_, err = expfmt.MetricFamilyToText(&want, dtoFamily(fam))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if f == OpenMetrics {
			expfmt.FinalizeOpenMetrics(&want)
		}
		var got bytes.Buffer
		if err := Write(&got, families, f); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("format %d:\n got:\n%s\nwant (expfmt):\n%s", f, got.String(), want.String())
		}
	}
}

// What the text format writes, expfmt's parser reads back: names, label
// values (escapes, UTF-8) and values.
func TestParsesBack(t *testing.T) {
	var buf bytes.Buffer
	if err := Write(&buf, families, Text); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	got, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, fam := range families {
		mf, ok := got[fam.Name]
		if len(fam.Samples) == 0 {
			if ok {
				t.Errorf("%s: a family without samples was written", fam.Name)
			}
			continue
		}
		if !ok || mf.GetHelp() != fam.Help || len(mf.Metric) != len(fam.Samples) {
			t.Fatalf("%s: read back %v", fam.Name, mf)
		}
		for i, s := range fam.Samples {
			m := mf.Metric[i]
			v := m.GetGauge().GetValue()
			if fam.Type == Counter {
				v = m.GetCounter().GetValue()
			}
			if v != s.Value && !(math.IsNaN(v) && math.IsNaN(s.Value)) {
				t.Errorf("%s[%d] = %v, want %v", fam.Name, i, v, s.Value)
			}
			for j, l := range s.Labels {
				if m.Label[j].GetName() != l.Name || m.Label[j].GetValue() != l.Value {
					t.Errorf("%s[%d] label %v, want %v", fam.Name, i, m.Label[j], l)
				}
			}
		}
	}
}

// A label value that is not UTF-8 (a key another client wrote) is written
// with U+FFFD, which a parser accepts, instead of failing the scrape.
func TestNotUTF8(t *testing.T) {
	var buf bytes.Buffer
	fams := []Family{{Name: "x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"list", "a\xffb"}}, Value: 1}}}}
	if err := Write(&buf, fams, Text); err != nil {
		t.Fatal(err)
	}
	if got := buf.String(); got != "# TYPE x gauge\nx{list=\"a\uFFFDb\"} 1\n" {
		t.Errorf("got %q", got)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	if _, err := p.TextToMetricFamilies(strings.NewReader(buf.String())); err != nil {
		t.Error(err)
	}
}

func TestRefuses(t *testing.T) {
	for _, fam := range []Family{
		{Name: "1x", Type: Gauge},
		{Name: "a-b", Type: Gauge},
		{Name: "hits", Type: Counter},
		{Name: "x", Type: "histogram"},
		{Name: "x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"a:b", "v"}}}}},
		{Name: "x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"__name__", "v"}}}}},
	} {
		var buf bytes.Buffer
		if err := Write(&buf, []Family{families[0], fam}, Text); err == nil || buf.Len() != 0 {
			t.Errorf("%+v: err %v, wrote %q", fam, err, buf.String())
		}
	}
}

func TestNegotiate(t *testing.T) {
	for _, tt := range []struct {
		accept string
		want   Format
	}{
		{"", Text},
		{"*/*", Text},
		{"text/plain", Text},
		// Prometheus 2.x's scrape
		{"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", OpenMetrics},
		{"application/openmetrics-text; version=1.0.0", OpenMetrics},
		{"application/openmetrics-text", OpenMetrics},
		{"application/openmetrics-text;version=0.0.1", Text}, // a version this package does not write
		{"text/plain;q=1,application/openmetrics-text;q=0.5", Text},
		{"application/openmetrics-text;q=0", Text},
		{"garbage;;;", Text},
	} {
		if got := Negotiate(tt.accept); got != tt.want {
			t.Errorf("Negotiate(%q) = %d, want %d", tt.accept, got, tt.want)
		}
	}
}
